import { generateKeyPairSync, randomBytes, sign, type JsonWebKey } from 'node:crypto';
import { accessTokenHash, checkProof, type ProofContext } from '../../lib/dpop/proof';
import { jwkThumbprint } from '../../lib/jose/jwk';
import { createDpopHolder } from '../../lib/testing';

// checkProof alone: which check refuses a hostile proof, seen through the error's log reason. The order matters
// for cost: a key the token is not bound to, or an RSA key outside the bounds, must be refused before any
// signature is checked (a 16 384-bit modulus or a 3 064-bit exponent cost 12 to 60 ES256 checks).
const NOW = 1_700_000_000;
const URL_ = 'https://api.example.test/orders';
const TOKEN = 'header.payload.signature';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function context(jkt: string): ProofContext {
  return {
    method: 'GET',
    uri: URL_,
    jkt,
    token: TOKEN,
    now: NOW,
    iatWindow: 60,
    clockTolerance: 5,
    algorithms: new Set(['ES256', 'RS256', 'EdDSA', 'Ed25519']),
  };
}

const claims = () => ({
  htm: 'GET',
  htu: URL_,
  iat: NOW,
  jti: randomBytes(8).toString('hex'),
  ath: accessTokenHash(TOKEN),
});

/** A proof whose signature is random bytes: whatever refuses it, it is never the signature's fault if checked first. */
function unsigned(jwk: JsonWebKey, signatureBytes: number): string {
  return `${b64({ typ: 'dpop+jwt', alg: 'RS256', jwk })}.${b64(claims())}.${randomBytes(signatureBytes).toString('base64url')}`;
}

/** A random odd number of exactly `bits` bits, as a JWK member. */
function oddNumber(bits: number): string {
  const bytes = randomBytes(Math.ceil(bits / 8));
  const spare = (8 - (bits % 8)) % 8;
  bytes[0] = (bytes[0] & (0xff >> spare)) | (0x80 >> spare);
  bytes[bytes.length - 1] |= 1;
  return bytes.toString('base64url');
}

const reasonOf = (proof: string, jkt: string) => {
  try {
    checkProof(proof, context(jkt));
  } catch (err) {
    return (err as { reason?: string }).reason;
  }
  return 'accepted';
};

describe('checkProof', () => {
  const holder = createDpopHolder('ES256', () => NOW);

  it('accepts a good proof for the key the token is bound to', () => {
    expect(reasonOf(holder.proof({ method: 'GET', url: URL_, token: TOKEN }), holder.jkt)).toBe('accepted');
  });

  it("compares the key with the token's cnf.jkt before the signature: a stranger's key is refused as such", () => {
    const stranger = createDpopHolder('ES256', () => NOW);
    const [h, p] = stranger.proof({ method: 'GET', url: URL_, token: TOKEN }).split('.');
    expect(reasonOf(`${h}.${p}.${randomBytes(64).toString('base64url')}`, holder.jkt)).toBe('dpop:jkt');
    // Its header cached after a good proof of its own changes nothing.
    expect(reasonOf(stranger.proof({ method: 'GET', url: URL_, token: TOKEN }), stranger.jkt)).toBe('accepted');
    expect(reasonOf(`${h}.${p}.${randomBytes(64).toString('base64url')}`, holder.jkt)).toBe('dpop:jkt');
  });

  it('refuses a hostile RSA key the token is not bound to without checking its signature', () => {
    const huge = { kty: 'RSA', n: oddNumber(16_384), e: 'AQAB' };
    expect(reasonOf(unsigned(huge, 2048), holder.jkt)).toBe('dpop:jkt');
  });

  it('refuses an RSA key outside 2048–4096 bits or with an exponent over 65537, even one the token is bound to', () => {
    const keys: JsonWebKey[] = [
      { kty: 'RSA', n: oddNumber(16_384), e: 'AQAB' },
      { kty: 'RSA', n: oddNumber(4104), e: 'AQAB' },
      { kty: 'RSA', n: oddNumber(2040), e: 'AQAB' },
      { kty: 'RSA', n: oddNumber(3072), e: oddNumber(3064) },
      { kty: 'RSA', n: oddNumber(2048), e: Buffer.from([1, 0, 3]).toString('base64url') }, // 65539
      { kty: 'RSA', n: oddNumber(2048), e: Buffer.from([0, 1, 0, 1]).toString('base64url') }, // 65537, padded: fine
    ];
    const reasons = keys.map((jwk) => reasonOf(unsigned(jwk, 256), jwkThumbprint(jwk as Record<string, unknown>)));
    expect(reasons).toEqual([...Array(5).fill('dpop:jwk-rsa-size'), 'dpop:signature']);
  });

  it('refuses a genuinely signed proof whose RSA exponent is 65539', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65539 });
    const jwk = publicKey.export({ format: 'jwk' });
    const input = `${b64({ typ: 'dpop+jwt', alg: 'RS256', jwk })}.${b64(claims())}`;
    const proof = `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
    expect(reasonOf(proof, jwkThumbprint(jwk as Record<string, unknown>))).toBe('dpop:jwk-rsa-size');
  });

  it('ignores the query and fragment of htu (RFC 9449 §4.3 (9)) and still compares the rest', () => {
    for (const htu of [`${URL_}?page=2`, `${URL_}#top`, `${URL_}?a=1#b`]) {
      expect(reasonOf(holder.proof({ method: 'GET', url: URL_, token: TOKEN, claims: { htu } }), holder.jkt)).toBe(
        'accepted',
      );
    }
    expect(
      reasonOf(
        holder.proof({ method: 'GET', url: URL_, token: TOKEN, claims: { htu: `${URL_}/x?page=2` } }),
        holder.jkt,
      ),
    ).toBe('dpop:htu');
  });

  it('refuses a jwk whose kty names a member of Object.prototype as a bad key, not with a TypeError', () => {
    for (const kty of ['constructor', 'toString', '__proto__']) {
      expect(reasonOf(unsigned({ kty } as JsonWebKey, 64), holder.jkt)).toBe('dpop:jwk');
    }
  });

  it('compares typ as RFC 7515 §4.1.9 says (case-insensitive, application/ optional), and refuses another typ', () => {
    for (const typ of ['application/dpop+jwt', 'DPoP+JWT']) {
      expect(reasonOf(holder.proof({ method: 'GET', url: URL_, token: TOKEN, header: { typ } }), holder.jkt)).toBe(
        'accepted',
      );
    }
    for (const typ of ['jwt', 'at+jwt', 7]) {
      expect(reasonOf(holder.proof({ method: 'GET', url: URL_, token: TOKEN, header: { typ } }), holder.jkt)).toBe(
        'dpop:typ',
      );
    }
  });

  it('reads the proof with the strict compact-JWS reader: a signature spelt non-canonically is refused', () => {
    const proof = holder.proof({ method: 'GET', url: URL_, token: TOKEN });
    // An ES256 signature is 64 bytes, 86 characters: the last one carries 4 unused bits, which decoders ignore.
    const last = proof.charCodeAt(proof.length - 1);
    const respelt = `${proof.slice(0, -1)}${String.fromCharCode(last + 1)}`;
    expect(Buffer.from(respelt.split('.')[2], 'base64url')).toEqual(Buffer.from(proof.split('.')[2], 'base64url'));
    expect(reasonOf(respelt, holder.jkt)).toBe('dpop:syntax');
    expect(reasonOf(`${proof}.`, holder.jkt)).toBe('dpop:syntax');
    expect(reasonOf(proof.replace('.', '+'), holder.jkt)).toBe('dpop:syntax');
  });

  it('accepts alg Ed25519 (RFC 9864) for an Ed25519 key, never for an EC one', () => {
    const ed = createDpopHolder('EdDSA', () => NOW);
    expect(reasonOf(ed.proof({ method: 'GET', url: URL_, token: TOKEN, header: { alg: 'Ed25519' } }), ed.jkt)).toBe(
      'accepted',
    );
    expect(
      reasonOf(holder.proof({ method: 'GET', url: URL_, token: TOKEN, header: { alg: 'Ed25519' } }), holder.jkt),
    ).toBe('dpop:jwk-alg');
  });
});
