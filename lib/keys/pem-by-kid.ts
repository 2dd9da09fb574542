// Keys fetched one at a time as PEM, each at a key base + the token header's `kid` (AWS ALB's regional key endpoint):
// only a UUID `kid` ever reaches a URL; keys held by `kid`, bounded in count; new `kid`s fetched at most a few times
// per cooldown, kids that requests keep asking for first (keys/kid-budget.ts), concurrent requests for one `kid`
// sharing one fetch, kids the key server does not know remembered for a while.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import { keyFitsAlgorithm, type Algorithm } from '../jose/algorithms';
import { fetchBounded, RemoteFetchError, type BoundedAnswer } from '../fetch/bounded-fetch';
import { kidBudget, UNKNOWN_KID_SECONDS } from './kid-budget';
import type { SigningKeySource } from './source';

/**
 * The only `kid` this source puts in a URL: a UUID, as the ALB names its keys. The `kid` is the token's, so anyone's:
 * any other text (`../x`, `a/b`, `%2e%2e`, a URL, 200 characters) is refused before a request is made, and the
 * fetch can go nowhere but one file under the key base.
 */
export const PEM_KID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Largest PEM answer read (8 KiB); a P-256 public key is under 200 bytes. */
export const MAX_PEM_BYTES = 8 * 1024;

/** Most keys held, by `kid`, the least recently used dropped first; a region signs with one or two at a time. */
export const MAX_PEM_KIDS = 16;

export { MAX_KID_FETCHES, UNKNOWN_KID_SECONDS, UNKNOWN_KIDS } from './kid-budget';

/** Settings of a PEM-by-kid key source; durations in seconds. */
export interface PemByKidConfig {
  /** Where the keys are: a key's address is this URL (ending in `/`) followed by its `kid`. */
  base: URL;
  /** The window in which at most MAX_KID_FETCHES fetches of new kids start. */
  cooldown: number;
  /** Limit of one fetch, body included. */
  timeout: number;
  /** Algorithms a token header may name; a fetched key that fits none of them is unusable. */
  algorithms: ReadonlySet<Algorithm>;
  /** Current time in seconds (the `clock` option), which paces the fetches. */
  clock: () => number;
  /** How the tokens these keys verify write their segments (`'padded'`: AWS ALB's, padded or not). */
  segments?: 'padded';
}

/** A public key from a PEM answer (`-----BEGIN PUBLIC KEY-----`, SPKI) that fits one of `algorithms`, or undefined. */
export function readPemKey(text: string, algorithms: ReadonlySet<Algorithm>): KeyObject | undefined {
  if (!text.trimStart().startsWith('-----BEGIN PUBLIC KEY-----')) return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch {
    return undefined;
  }
  return [...algorithms].some((alg) => keyFitsAlgorithm(key, alg)) ? key : undefined;
}

/**
 * A key source that fetches each key as PEM from `base` + `kid` (AWS ALB: `https://public-keys.auth.elb.<region>
 * .amazonaws.com/<kid>`). A key once fetched is kept (a `kid` names one key for good); a `kid` the server does not
 * know (403, 404) is a 401, a server that cannot answer a 503 with `Retry-After`. Synchronous for a held key.
 */
export function pemByKidKeySource(config: PemByKidConfig): SigningKeySource {
  const { base, cooldown, clock, algorithms } = config;
  const timeoutMs = config.timeout * 1000;
  const closing = new AbortController();
  /** Held keys by `kid`, least recently used first. */
  const held = new Map<string, KeyObject>();
  const pending = new Map<string, Promise<KeyObject>>();
  const budget = kidBudget(cooldown);

  function unavailable(reason: string, cause?: unknown): TokenAuthError {
    return new TokenAuthError('verification_unavailable', { reason, cause, retryAfter: budget.retryAfter(clock()) });
  }

  function kidUnknown(remembered: boolean): TokenAuthError {
    const hint = remembered
      ? `the key server (${base.href}) answered 403/404 for this kid within the last ${UNKNOWN_KID_SECONDS} s: not asked again until then`
      : `the key server (${base.href}) does not know this kid: a token of another region or not the ALB's`;
    return new TokenAuthError('invalid_token', { reason: 'kid-unknown', hint });
  }

  function hold(kid: string, key: KeyObject): void {
    held.set(kid, key);
    if (held.size > MAX_PEM_KIDS) held.delete(held.keys().next().value as string);
  }

  async function download(kid: string): Promise<KeyObject> {
    let answer: BoundedAnswer;
    try {
      answer = await fetchBounded(`${base.href}${kid}`, {
        headers: { Accept: 'application/x-pem-file, text/plain, */*' },
        timeoutMs,
        maxBytes: MAX_PEM_BYTES,
        signal: closing.signal,
      });
    } catch (err) {
      throw unavailable(err instanceof RemoteFetchError ? `pem-${err.failure}` : 'pem-fetch', err);
    }
    if (answer.status === 403 || answer.status === 404) {
      budget.unknown(kid, clock());
      throw kidUnknown(false);
    }
    if (answer.status !== 200) throw unavailable('pem-fetch', new Error(`the key server answered ${answer.status}`));
    const key = readPemKey(answer.text, algorithms);
    if (key === undefined) throw unavailable('pem-unusable', new Error(`not a PEM public key for ${[...algorithms]}`));
    hold(kid, key);
    return key;
  }

  return {
    kind: 'jws',
    algorithms,
    segments: config.segments,
    keyFor(header) {
      const kid = header.kid;
      if (kid === undefined || !PEM_KID.test(kid)) {
        const hint = 'the ALB names its keys by UUID; a kid of any other form is refused before any fetch';
        throw new TokenAuthError('invalid_token', { reason: 'kid', hint });
      }
      const key = held.get(kid);
      if (key !== undefined) {
        held.delete(kid);
        held.set(kid, key);
        return key;
      }
      if (closing.signal.aborted) throw unavailable('pem-closed');
      const shared = pending.get(kid);
      if (shared !== undefined) return shared;
      const turn = budget.turn(kid, clock());
      if (turn === 'unknown') throw kidUnknown(true);
      if (turn === 'wait') throw unavailable('pem-cooldown');
      const run = download(kid).finally(() => pending.delete(kid));
      pending.set(kid, run);
      return run;
    },
    close() {
      closing.abort();
    },
  };
}
