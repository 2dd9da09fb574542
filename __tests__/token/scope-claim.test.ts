import { scopesFromValue } from '../../lib/token/scope-claim';

describe('scopesFromValue', () => {
  it('reads a space-separated string or an array of strings, and nothing else', () => {
    expect(scopesFromValue('a  b ')).toEqual(['a', 'b']);
    expect(scopesFromValue(['a', 'b'])).toEqual(['a', 'b']);
    for (const value of [undefined, null, 1, true, { a: 1 }, ['a', 1], [['a']]])
      expect(scopesFromValue(value)).toBeUndefined();
  });
});
