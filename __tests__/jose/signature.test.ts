import { constants, createSecretKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { ALGORITHMS, SUPPORTED_ALGORITHMS, type Algorithm } from '../../lib/jose/algorithms';
import { signJws, verifyJws } from '../../lib/jose/signature';

// The one sign and the one verify, over every row of the algorithm table.
const secret = createSecretKey(randomBytes(32));
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const curves = {
  ES256: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }),
  ES384: generateKeyPairSync('ec', { namedCurve: 'secp384r1' }),
  ES512: generateKeyPairSync('ec', { namedCurve: 'secp521r1' }),
};
const ed25519 = generateKeyPairSync('ed25519');
const ed448 = generateKeyPairSync('ed448');

/** The signing and verifying key of each algorithm (EdDSA's Ed448 case has its own row below). */
function keysOf(alg: Algorithm): { signing: KeyObject; verifying: KeyObject } {
  const family = ALGORITHMS[alg].family;
  if (family === 'hmac') return { signing: secret, verifying: secret };
  if (family === 'rsa' || family === 'rsa-pss') return { signing: rsa.privateKey, verifying: rsa.publicKey };
  if (family === 'ecdsa') {
    const pair = curves[alg as keyof typeof curves];
    return { signing: pair.privateKey, verifying: pair.publicKey };
  }
  return { signing: ed25519.privateKey, verifying: ed25519.publicKey };
}

/** A key of another kind than the algorithm needs (an asymmetric one for HS*, a secret for the others aside). */
function wrongKind(alg: Algorithm): KeyObject[] {
  const family = ALGORITHMS[alg].family;
  const others: Record<string, KeyObject[]> = {
    hmac: [rsa.publicKey, curves.ES256.publicKey, ed25519.publicKey],
    rsa: [curves.ES256.publicKey, ed25519.publicKey],
    'rsa-pss': [curves.ES256.publicKey, ed25519.publicKey],
    ecdsa: [
      rsa.publicKey,
      ed25519.publicKey,
      ...Object.entries(curves)
        .filter(([a]) => a !== alg)
        .map(([, p]) => p.publicKey),
    ],
    eddsa: [rsa.publicKey, curves.ES256.publicKey],
  };
  return others[family];
}

const INPUT = `${Buffer.from('{"alg":"x"}').toString('base64url')}.${Buffer.from('{"sub":"alice"}').toString('base64url')}`;
const jws = (input: string, signature: string) => `${input}.${signature}`;
const verifies = (token: string, alg: string, key: KeyObject) => verifyJws(token, token.lastIndexOf('.'), alg, key);

describe('signJws and verifyJws', () => {
  it.each(SUPPORTED_ALGORITHMS)('%s: what signJws signs, verifyJws accepts', (alg) => {
    const { signing, verifying } = keysOf(alg);
    expect(verifies(jws(INPUT, signJws(INPUT, alg, signing)), alg, verifying)).toBe(true);
  });

  it('EdDSA: an Ed448 signature verifies with its key; Ed25519 (RFC 9864) refuses that key', () => {
    const token = jws(INPUT, signJws(INPUT, 'EdDSA', ed448.privateKey));
    expect(verifies(token, 'EdDSA', ed448.publicKey)).toBe(true);
    expect(verifies(token, 'Ed25519', ed448.publicKey)).toBe(false);
  });

  it.each(SUPPORTED_ALGORITHMS)('%s: refuses a changed signing input and a changed signature', (alg) => {
    const { signing, verifying } = keysOf(alg);
    const signature = signJws(INPUT, alg, signing);
    const other = `${INPUT.split('.')[0]}.${Buffer.from('{"sub":"mallory"}').toString('base64url')}`;
    expect(verifies(jws(other, signature), alg, verifying)).toBe(false);
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expect(verifies(jws(INPUT, flipped), alg, verifying)).toBe(false);
  });

  it.each(SUPPORTED_ALGORITHMS)('%s: refuses a key of the wrong kind (no key confusion)', (alg) => {
    const { signing } = keysOf(alg);
    const token = jws(INPUT, signJws(INPUT, alg, signing));
    for (const key of wrongKind(alg)) expect(verifies(token, alg, key)).toBe(false);
  });

  it.each(SUPPORTED_ALGORITHMS.filter((alg) => ALGORITHMS[alg].family !== 'hmac'))(
    '%s: refuses an HMAC made with the public key as its secret, checked as HS256 against that key',
    (alg) => {
      const { verifying } = keysOf(alg);
      const pem = verifying.export({ type: 'spki', format: 'pem' }) as string;
      const forged = jws(INPUT, signJws(INPUT, 'HS256', pem));
      expect(verifies(forged, 'HS256', verifying)).toBe(false);
      expect(verifies(forged, alg, verifying)).toBe(false);
    },
  );

  it.each(SUPPORTED_ALGORITHMS.filter((alg) => ALGORITHMS[alg].family !== 'hmac'))(
    '%s: refuses a secret as the verifying key',
    (alg) => {
      const token = jws(INPUT, signJws(INPUT, alg, keysOf(alg).signing));
      expect(verifies(token, alg, secret)).toBe(false);
    },
  );

  it('never knows `none`: verify refuses it with every key, even with an empty signature; sign throws', () => {
    for (const key of [secret, rsa.publicKey, curves.ES256.publicKey, ed25519.publicKey]) {
      expect(verifies(`${INPUT}.`, 'none', key)).toBe(false);
      expect(verifies(jws(INPUT, signJws(INPUT, 'HS256', secret)), 'none', key)).toBe(false);
    }
    expect(() => signJws(INPUT, 'none', secret)).toThrow(TypeError);
    expect(ALGORITHMS).not.toHaveProperty('none');
  });

  it('refuses an RSA key under 2048 bits, for RS* and PS*, even with a genuine signature', () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    for (const alg of ['RS256', 'PS256', 'RS512'] as const) {
      expect(verifies(jws(INPUT, signJws(INPUT, alg, small.privateKey)), alg, small.publicKey)).toBe(false);
    }
  });

  it('refuses an HMAC secret under 32 bytes, even with a genuine signature', () => {
    const short = createSecretKey(randomBytes(31));
    expect(verifies(jws(INPUT, signJws(INPUT, 'HS256', short)), 'HS256', short)).toBe(false);
  });

  it('refuses a PS256 signature made with another salt length than the hash size (RFC 7518 §3.5)', () => {
    const pss = (saltLength: number) =>
      sign('sha256', Buffer.from(INPUT), {
        key: rsa.privateKey,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength,
      }).toString('base64url');
    expect(verifies(jws(INPUT, pss(32)), 'PS256', rsa.publicKey)).toBe(true);
    expect(verifies(jws(INPUT, pss(20)), 'PS256', rsa.publicKey)).toBe(false);
    expect(verifies(jws(INPUT, pss(0)), 'PS256', rsa.publicKey)).toBe(false);
  });

  it('refuses an ES256 signature in DER rather than R ‖ S (RFC 7518 §3.4)', () => {
    const { privateKey, publicKey } = curves.ES256;
    const der = sign('sha256', Buffer.from(INPUT), privateKey).toString('base64url');
    const p1363 = sign('sha256', Buffer.from(INPUT), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    expect(verifies(jws(INPUT, der), 'ES256', publicKey)).toBe(false);
    expect(verifies(jws(INPUT, p1363.toString('base64url')), 'ES256', publicKey)).toBe(true);
  });

  it('refuses an ES256 signature made on another curve with the right digest', () => {
    const signature = sign('sha256', Buffer.from(INPUT), { key: curves.ES384.privateKey, dsaEncoding: 'ieee-p1363' });
    expect(verifies(jws(INPUT, signature.toString('base64url')), 'ES256', curves.ES384.publicKey)).toBe(false);
  });

  it('refuses an HMAC whose text differs from the expected one: truncated, or its unused bits set', () => {
    const signature = signJws(INPUT, 'HS256', secret);
    expect(verifies(jws(INPUT, signature.slice(0, -1)), 'HS256', secret)).toBe(false);
    // 32 bytes are 43 characters, whose last carries 2 unused bits: decoders ignore them, the comparison does not.
    const last = signature.charCodeAt(signature.length - 1);
    const respelt = `${signature.slice(0, -1)}${String.fromCharCode(last + 1)}`;
    expect(Buffer.from(respelt, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    expect(verifies(jws(INPUT, respelt), 'HS256', secret)).toBe(false);
  });

  it('refuses an HMAC text longer than the expected one, and one of its length holding a non-ASCII character', () => {
    const signature = signJws(INPUT, 'HS256', secret);
    expect(verifies(jws(INPUT, `${signature}A`), 'HS256', secret)).toBe(false);
    expect(verifies(jws(INPUT, `${signature.slice(0, -1)}é`), 'HS256', secret)).toBe(false);
    expect(verifies(jws(INPUT, 'A'.repeat(200)), 'HS256', secret)).toBe(false);
  });

  it('leaves nothing of one HMAC comparison in the next: a refused HS512 text, then a good HS256 one', () => {
    // The comparison writes both texts into fixed buffers; an HS512 text fills 86 bytes of them, an HS256 one 43.
    const hs512 = signJws(INPUT, 'HS512', secret);
    const wrong = `${hs512.slice(0, 60)}${hs512[60] === 'A' ? 'B' : 'A'}${hs512.slice(61)}`; // wrong past byte 43
    expect(verifies(jws(INPUT, wrong), 'HS512', secret)).toBe(false);
    expect(verifies(jws(INPUT, signJws(INPUT, 'HS256', secret)), 'HS256', secret)).toBe(true);
    expect(verifies(jws(INPUT, hs512), 'HS512', secret)).toBe(true);
    expect(verifies(jws(INPUT, signJws(INPUT, 'HS384', secret)), 'HS384', secret)).toBe(true);
  });

  it.each(['HS256', 'RS256', 'ES256', 'EdDSA'] as const)(
    '%s: reads text as UTF-8, so a character beyond Latin-1 never stands in for the byte it truncates to',
    (alg) => {
      const { signing, verifying } = keysOf(alg);
      const signature = signJws(INPUT, alg, signing);
      const lookalike = `${String.fromCharCode(INPUT.charCodeAt(0) + 0x100)}${INPUT.slice(1)}`;
      expect(Buffer.from(lookalike, 'latin1')).toEqual(Buffer.from(INPUT, 'latin1'));
      expect(verifies(jws(lookalike, signature), alg, verifying)).toBe(false);
    },
  );

  it('verifies PS* with an RSA-PSS key only when its parameters name that hash; one without parameters, never', () => {
    const restricted = generateKeyPairSync('rsa-pss', {
      modulusLength: 2048,
      hashAlgorithm: 'sha384',
      mgf1HashAlgorithm: 'sha384',
    });
    expect(verifies(jws(INPUT, signJws(INPUT, 'PS384', restricted.privateKey)), 'PS384', restricted.publicKey)).toBe(
      true,
    );
    expect(verifies(jws(INPUT, signJws(INPUT, 'PS256', rsa.privateKey)), 'PS256', restricted.publicKey)).toBe(false);
    // jsonwebtoken's rule, kept: a key whose parameters are unrestricted is refused for every PS algorithm.
    const open = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
    expect(verifies(jws(INPUT, signJws(INPUT, 'PS256', open.privateKey)), 'PS256', open.publicKey)).toBe(false);
  });
});
