import { normalizeTyp } from '../../lib/jose/jws';
import { modeHint, typRefused } from '../../lib/token/claim-modes';

describe('typ (RFC 8725 §3.11)', () => {
  it('is normalised case-insensitively, application/ optional', () => {
    expect(normalizeTyp('Application/AT+JWT')).toBe('at+jwt');
    expect(normalizeTyp('JWT')).toBe('jwt');
    expect(normalizeTyp('application/jwt')).toBe('jwt');
  });

  it('refuses any other kind of JWT, accepts JWT, at+jwt and no typ when no list narrows it', () => {
    for (const typ of ['dpop+jwt', 'logout+jwt', 'secevent+jwt', 'id_token+jwt', 'application/DPoP+JWT', 'x+jwt']) {
      expect(typRefused(typ, undefined)).toBe(true);
    }
    for (const typ of [undefined, 'JWT', 'at+jwt', 'application/at+jwt'])
      expect(typRefused(typ, undefined)).toBe(false);
    expect(typRefused(7, undefined)).toBe(true);
  });

  it('with a list, refuses a missing typ and any value outside it', () => {
    const accepted = new Set(['at+jwt']);
    expect(typRefused('AT+JWT', accepted)).toBe(false);
    expect(typRefused(undefined, accepted)).toBe(true);
    expect(typRefused('JWT', accepted)).toBe(true);
  });
});

describe('modeHint', () => {
  it('names the mode only for refusals the mode caused', () => {
    expect(modeHint('strict', 'shape:providers')).toMatch(/claims: 'jwt'/);
    expect(modeHint('strict', 'shape:scopes')).toMatch(/claims: 'jwt'/);
    expect(modeHint('at+jwt', 'at+jwt:client_id')).toMatch(/RFC 9068/);
    expect(modeHint('jwt', 'jwt:sub')).toMatch(/RFC 7519/);
    expect(modeHint('at+jwt', 'typ')).toMatch(/RFC 9068/);
    expect(modeHint('strict', 'signature')).toBeUndefined();
    expect(modeHint('jwt', 'aud')).toBeUndefined();
    expect(modeHint('jwt', undefined)).toBeUndefined();
  });
});
