// The key option's object form, read at createTokenAuth: exactly one form, and only the fields that form takes.
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { AUDIENCE, ISSUER, rsaKeys, SECRET } from '../fixtures/issuer';

const rsa = rsaKeys();

describe('remote key options', () => {
  const base = { issuer: ISSUER, audience: AUDIENCE };
  const make = (options: Record<string, unknown>) => () =>
    createTokenAuth({ ...base, ...options } as TokenAuthOptions).close();

  it.each([
    [{ secret: SECRET, cooldown: '30s' }, /"key.cooldown" does not apply to key.secret/],
    [{ publicKey: rsa.publicKey, timeout: 5 }, /"key.timeout" does not apply to key.publicKey/],
    [{ upstream: 'https://id.example.com', cooldown: 5 }, /"key.cooldown" does not apply to key.upstream/],
    [{ jwksUri: 'https://id.example.com/jwks', timout: 5 }, /"key.timout" does not apply to key.jwksUri/],
    [{ jwksUri: 'https://id.example.com/jwks', cooldown: 'soon' }, /"key.cooldown"/],
    [{ jwksUri: 'https://id.example.com/jwks', timeout: 0 }, /"key.timeout" must be more than zero/],
    [{ upstream: 'https://id.example.com', timeout: '5' }, /"key.timeout"/],
    [{ upstream: 'https://id.example.com/api?x=1' }, /without a query string/],
    [{ jwksUri: 'https://id.example.com/jwks', upstream: 'https://id.example.com' }, /exactly one of/],
  ])('refuses key %p with a TypeError', (key, message) => {
    expect(make({ key })).toThrow(TypeError);
    expect(make({ key })).toThrow(message);
  });

  it('treats a key field left undefined as absent', () => {
    expect(make({ key: { jwksUri: 'https://id.example.com/jwks', secret: undefined } })).not.toThrow();
  });

  it('accepts durations as seconds or strings with a unit', () => {
    expect(make({ key: { jwksUri: 'https://id.example.com/jwks', cooldown: '1m', timeout: '500ms' } })).not.toThrow();
    expect(make({ key: { jwksUri: 'https://id.example.com/jwks', cooldown: 0, timeout: 2 } })).not.toThrow();
  });

  it('refuses HS* algorithms with a JWKS and any algorithms option in upstream mode', () => {
    expect(make({ key: { jwksUri: 'https://id.example.com/jwks' }, algorithms: ['RS256', 'HS256'] })).toThrow(
      /HS\* algorithm/,
    );
    expect(make({ key: { upstream: 'https://id.example.com' }, algorithms: ['RS256'] })).toThrow(
      /does not apply with key.upstream/,
    );
  });
});
