import * as entry from '../../lib';
import { OptionError, optionError, optionName, optionPath } from '../../lib/base/option-error';

describe('OptionError', () => {
  it('is a TypeError carrying the dotted path of the option it refuses', () => {
    const err = new OptionError('cache.max', 'express-verified-user: option "cache.max" must be a positive integer');
    expect(err).toBeInstanceOf(TypeError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('OptionError');
    expect(err.option).toBe('cache.max');
    expect(err.message).toBe('express-verified-user: option "cache.max" must be a positive integer');
    expect(String(err)).toBe('OptionError: express-verified-user: option "cache.max" must be a positive integer');
  });

  it('is exported by the main entry as a value, so that apps can test for it', () => {
    expect(entry.OptionError).toBe(OptionError);
    let caught: unknown;
    try {
      entry.createTokenAuth({ key: { secret: 'short' }, issuer: 'i', audience: 'a' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(entry.OptionError);
    expect((caught as OptionError).option).toBe('key.secret');
  });
});

describe('optionError', () => {
  it('throws an OptionError at the path given, its message prefixed with the package name', () => {
    expect(() => optionError('introspection.clientId', 'option "introspection.clientId" must be a string')).toThrow(
      new OptionError(
        'introspection.clientId',
        'express-verified-user: option "introspection.clientId" must be a string',
      ),
    );
    let caught: unknown;
    try {
      optionError('issuerBaseURL[1]', 'x');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(OptionError);
    expect(caught).toMatchObject({ option: 'issuerBaseURL[1]', message: 'express-verified-user: x' });
  });
});

describe('optionName and optionPath', () => {
  it('name an option in messages, with the function that takes it when that is not createTokenAuth', () => {
    expect(optionName('cache.max')).toBe('option "cache.max"');
    expect(optionName('defaultView', 'verifyRouter')).toBe('verifyRouter option "defaultView"');
  });

  it('join a field to its option path; the empty path is the options object itself', () => {
    expect(optionPath('', 'cache')).toBe('cache');
    expect(optionPath('cache', 'max')).toBe('cache.max');
    expect(optionPath('key.breaker', 'failures')).toBe('key.breaker.failures');
  });
});
