import { createTokenAuth, type TokenAuthOptions } from '../../lib';

const base: TokenAuthOptions = {
  key: { secret: 'a-secret-of-at-least-32-bytes-for-hs256!!' },
  issuer: 'i',
  audience: 'a',
};
const build = (extra: Record<string, unknown>) => () => createTokenAuth({ ...base, ...extra } as TokenAuthOptions);

describe('dpop and mtls options, checked at createTokenAuth', () => {
  it.each([
    [{ dpop: 'yes' }, /"dpop" must be an object/],
    [{ dpop: true }, /"dpop" must be an object/],
    [{ dpop: { requried: true } }, /unknown option "dpop.requried"/],
    [{ dpop: { required: 'yes' } }, /"dpop.required" must be a boolean/],
    [{ dpop: { iatWindow: '60' } }, /"dpop.iatWindow"/],
    [{ dpop: { iatWindow: 0 } }, /"dpop.iatWindow" must be at least one second/],
    [{ dpop: { algorithms: ['HS256'] } }, /"dpop.algorithms" holds "HS256"/],
    [{ dpop: { algorithms: ['none'] } }, /"dpop.algorithms" holds "none"/],
    [{ dpop: { algorithms: [] } }, /"dpop.algorithms" must be a non-empty array/],
    [{ dpop: { nonce: { secret: 'short' } } }, /"dpop.nonce.secret" must be a string or Buffer of at least 32 bytes/],
    [{ dpop: { nonce: { secret: 'x'.repeat(32), lifetime: 'soon' } } }, /"dpop.nonce.lifetime"/],
    [{ dpop: { nonce: { secret: 'x'.repeat(32), ttl: 5 } } }, /unknown option "dpop.nonce.ttl"/],
    [{ dpop: { replay: {} } }, /"dpop.replay" must be a ReplayStore/],
    [{ mtls: { getCertificate: 'socket' } }, /"mtls.getCertificate" must be a function/],
    [{ mtls: { header: 'x' } }, /unknown option "mtls.header"/],
  ])('throws a TypeError naming the option for %j', (extra, message) => {
    expect(build(extra)).toThrow(TypeError);
    expect(build(extra)).toThrow(message);
  });

  it('accepts a complete configuration', () => {
    expect(
      build({
        dpop: {
          required: true,
          iatWindow: '30s',
          algorithms: ['ES256', 'EdDSA'],
          nonce: { secret: Buffer.alloc(32, 1), lifetime: '5m' },
          replay: { claimOnce: () => true },
        },
        mtls: { getCertificate: () => undefined },
      }),
    ).not.toThrow();
  });
});
