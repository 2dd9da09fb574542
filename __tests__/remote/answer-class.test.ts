/**
 * How a remote answer counts (remote/answer-class.ts), the one rule of every remote source: an outage (503, the
 * breaker), an answer about one token (401, never an outage), or a throttle (503, every new call held).
 */
import { TokenAuthError } from '../../lib';
import { RemoteFetchError, type BoundedAnswer } from '../../lib/fetch/bounded-fetch';
import {
  aboutToken,
  classOfStatus,
  countAsOutage,
  countedAs,
  fetchFailure,
  outage,
  statusFailure,
  throttled,
} from '../../lib/remote/answer-class';

const answer = (status: number, headers: Record<string, string> = {}): BoundedAnswer => ({
  status,
  headers: new Headers(headers),
  text: '',
  bytes: 0,
});

describe('classOfStatus', () => {
  it.each([
    [400, 'token'],
    [413, 'token'],
    [429, 'throttle'],
    [500, 'outage'],
    [502, 'outage'],
    [503, 'outage'],
    [504, 'outage'],
    [404, 'outage'],
    [302, 'outage'],
    [204, 'outage'],
  ])('counts a %i as %s', (status, kind) => {
    expect(classOfStatus(status)).toBe(kind);
  });
});

describe('statusFailure', () => {
  it('makes a 400 or a 413 the token fault, a 401 counted by nothing', () => {
    for (const status of [400, 413]) {
      const err = statusFailure('upstream', answer(status, { 'Retry-After': '30' }));
      expect([err.code, err.status, err.reason]).toEqual(['invalid_token', 401, `upstream-status-${status}`]);
      expect(countedAs(err)).toBeUndefined();
    }
  });

  it('makes a 429 a throttle for its Retry-After, capped at 300 s, or the default 5 s', () => {
    for (const [given, wait] of [
      ['120', 120],
      ['86400', 300],
      [undefined, 5],
    ] as const) {
      const err = statusFailure('introspection', answer(429, given === undefined ? {} : { 'Retry-After': given }));
      expect([err.code, err.reason, err.headers['Retry-After']]).toEqual([
        'verification_unavailable',
        'introspection-status-429',
        String(wait),
      ]);
      expect(countedAs(err)).toEqual({ kind: 'throttle', wait });
    }
  });

  it("makes a 5xx an outage; a 503's own Retry-After is what it demands of the breaker", () => {
    const unavailable = statusFailure('upstream', answer(503, { 'Retry-After': '120' }));
    expect([unavailable.status, unavailable.headers['Retry-After']]).toEqual([503, '120']);
    expect(countedAs(unavailable)).toEqual({ kind: 'outage', demand: 120 });
    const failing = statusFailure('upstream', answer(500, { 'Retry-After': '120' }));
    expect(failing.headers['Retry-After']).toBe('120');
    expect(countedAs(failing)).toEqual({ kind: 'outage', demand: undefined });
  });
});

describe('fetchFailure', () => {
  it('counts a timeout, a refused connection and an oversized error body as outages', () => {
    for (const err of [
      new RemoteFetchError('timeout'),
      new RemoteFetchError('network'),
      new RemoteFetchError('too-large', undefined, 502),
      new Error('anything'),
    ]) {
      const failure = fetchFailure('upstream', err);
      expect(failure.status).toBe(503);
      expect(countedAs(failure)?.kind).toBe('outage');
    }
  });

  it("makes a 200 over the size bound the token's fault (its claims are too large): a 401", () => {
    const failure = fetchFailure('introspection', new RemoteFetchError('too-large', undefined, 200));
    expect([failure.code, failure.reason]).toEqual(['invalid_token', 'introspection-too-large']);
    expect(countedAs(failure)).toBeUndefined();
  });
});

describe('countedAs', () => {
  it('counts only what was made an outage or a throttle', () => {
    expect(countedAs(outage('x-network'))).toEqual({ kind: 'outage', demand: undefined });
    expect(countedAs(throttled('x-status-429', 9))).toEqual({ kind: 'throttle', wait: 9 });
    expect(countedAs(aboutToken('x-status-400'))).toBeUndefined();
    expect(countedAs(new TokenAuthError('verification_unavailable', { reason: 'x-busy' }))).toBeUndefined();
    expect(countedAs(new Error('down'))).toBeUndefined();
  });

  it('counts an outage met on the way (discovery, keys) once marked so, and never a token fault', () => {
    const discovery = new TokenAuthError('verification_unavailable', { reason: 'discovery-network' });
    expect(countedAs(countAsOutage(discovery))).toEqual({ kind: 'outage', demand: undefined });
    expect(countedAs(countAsOutage(new TokenAuthError('invalid_token')))).toBeUndefined();
  });
});
