import { parseDuration } from '../../lib/base/duration';

describe('parseDuration', () => {
  it.each([
    [30, 30],
    [0, 0],
    ['500ms', 0.5],
    ['30s', 30],
    ['10m', 600],
    ['2h', 7200],
    ['1d', 86400],
    ['90d', 7776000],
  ])('reads %p as %p seconds', (input, seconds) => {
    expect(parseDuration(input, 'x')).toBe(seconds);
  });

  it.each([['10'], ['-5s'], ['abc'], [-1], [Infinity], [null], [{}]])('refuses %p', (input) => {
    expect(() => parseDuration(input, 'timeout')).toThrow(/"timeout"/);
  });
});
