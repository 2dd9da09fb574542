import { algorithmsForKey, ALGORITHMS, SUPPORTED_ALGORITHMS } from '../../lib/jose/algorithms';
import { generateSigningKeyPair, signCompact, signToken } from '../../lib/jose/sign';
import { verifyJws } from '../../lib/jose/signature';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const decode = (segment: string) => Buffer.from(segment, 'base64url').toString('utf8');

describe('signCompact', () => {
  it('serialises the header and payload exactly as given, and signs them with the alg asked for', () => {
    const token = signCompact({ typ: 'dpop+jwt', alg: 'HS256', extra: 1 }, { b: 2, a: 1 }, SECRET, 'HS256');
    const [header, payload] = token.split('.');
    expect(decode(header)).toBe('{"typ":"dpop+jwt","alg":"HS256","extra":1}');
    expect(decode(payload)).toBe('{"b":2,"a":1}');
  });

  it('signs with its alg argument even when the header names another, so tests can make a header that lies', () => {
    const { privateKey, publicKey } = generateSigningKeyPair('ES256');
    const token = signCompact({ alg: 'HS256' }, {}, privateKey, 'ES256');
    expect(verifyJws(token, token.lastIndexOf('.'), 'ES256', publicKey)).toBe(true);
  });
});

describe('signToken', () => {
  it('puts alg and typ JWT first, lets the header add or replace members, and adds no claim', () => {
    const token = signToken({ sub: 'x' }, SECRET, 'HS384', { kid: 'k1', typ: 'at+jwt' });
    const [header, payload] = token.split('.');
    expect(decode(header)).toBe('{"alg":"HS384","typ":"at+jwt","kid":"k1"}');
    expect(decode(payload)).toBe('{"sub":"x"}');
  });
});

describe('generateSigningKeyPair', () => {
  it.each(SUPPORTED_ALGORITHMS.filter((alg) => ALGORITHMS[alg].family !== 'hmac'))(
    'makes a %s key pair whose public key verifies that algorithm',
    (alg) => {
      const { publicKey } = generateSigningKeyPair(alg as Exclude<typeof alg, 'HS256' | 'HS384' | 'HS512'>);
      expect(algorithmsForKey(publicKey)).toContain(alg);
    },
  );
});
