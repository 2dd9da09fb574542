// The exchanged-token cache (docs/exchange.md): one entry per (subject token, target), bounded in count and bytes,
// alive until the issued token's expiry less a margin and never past the subject's `exp`; one call per key at a time.
// It holds neither token in clear: keys are HMACs, and each issued token is sealed under a key only its subject makes.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { IssuedToken } from './exchange-answer';

/** An issued token with the moment it expires (seconds since the epoch), when its answer said. */
export interface HeldToken {
  readonly token: IssuedToken;
  readonly expiresAt: number | undefined;
}

/** The two keys of one (subject token, target): where its entry is found, and what opens it. */
export interface ExchangeKeys {
  readonly lookup: string;
  readonly seal: Buffer;
}

/** Longest margin kept between the end of an entry and its token's expiry: a caller gets a token with time to use. */
export const EXPIRY_MARGIN = 30;
/** What an entry costs beyond its sealed bytes and key (the entry object, the LRU's bookkeeping), for `maxBytes`. */
const ENTRY_OVERHEAD = 256;
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface Entry {
  /** IV, AES-256-GCM ciphertext of the held token's JSON, tag. */
  readonly sealed: Buffer;
  /** End of the entry (seconds since the epoch). */
  readonly until: number;
}

/**
 * Until when a token may be served from the cache: its expiry less a margin (30 s, or half its life when shorter),
 * never past the subject token's `exp`; undefined (not cached) when the answer named no lifetime or it is over.
 */
export function cachedUntil(held: HeldToken, now: number, subjectExp: number | undefined): number | undefined {
  const { expiresIn } = held.token;
  if (expiresIn === undefined || held.expiresAt === undefined) return undefined;
  let until = held.expiresAt - Math.min(EXPIRY_MARGIN, expiresIn / 2);
  if (subjectExp !== undefined) until = Math.min(until, subjectExp);
  return until > now ? until : undefined;
}

function sealed(held: HeldToken, key: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(held), 'utf8'), cipher.final()]);
  // Memory of its own, exactly its size: a small pooled Buffer would keep a whole shared 8 KiB slab alive.
  const out = Buffer.allocUnsafeSlow(IV_BYTES + body.length + TAG_BYTES);
  iv.copy(out, 0);
  body.copy(out, IV_BYTES);
  cipher.getAuthTag().copy(out, IV_BYTES + body.length);
  return out;
}

function opened(entry: Entry, key: Buffer): HeldToken | undefined {
  try {
    const iv = entry.sealed.subarray(0, IV_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(entry.sealed.subarray(entry.sealed.length - TAG_BYTES));
    const body = entry.sealed.subarray(IV_BYTES, entry.sealed.length - TAG_BYTES);
    return JSON.parse(Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8')) as HeldToken;
  } catch {
    return undefined;
  }
}

/**
 * Exchanged tokens of one TokenAuth. `bounds` false: nothing is kept, but concurrent calls of one key still share
 * one exchange.
 */
export class ExchangeCache {
  /** This instance's HMAC key: a key seen in a heap dump leads to no token without the subject token too. */
  private readonly secret = randomBytes(32);
  private readonly lru: LRUCache<string, Entry> | undefined;
  private readonly pending = new Map<string, Promise<HeldToken>>();

  constructor(bounds: { max: number; maxBytes: number } | false) {
    if (bounds !== false) this.lru = new LRUCache<string, Entry>({ max: bounds.max, maxSize: bounds.maxBytes });
  }

  /** The keys of a subject token and a target (its normal text): HMACs apart, so the lookup key opens nothing. */
  keysOf(subject: string, target: string): ExchangeKeys {
    const mac = (label: string) => createHmac('sha256', this.secret).update(`${label}\0${subject}\0${target}`).digest();
    return { lookup: mac('lookup').toString('base64'), seal: mac('seal') };
  }

  /** The token held for these keys, alive at `now`. */
  get(keys: ExchangeKeys, now: number): HeldToken | undefined {
    const entry = this.lru?.get(keys.lookup);
    if (entry === undefined) return undefined;
    const held = entry.until > now ? opened(entry, keys.seal) : undefined;
    if (held === undefined) this.lru?.delete(keys.lookup);
    return held;
  }

  /** Keep `held` until `until` (seconds since the epoch); an entry over the byte bound is not kept. */
  set(keys: ExchangeKeys, held: HeldToken, until: number): void {
    if (this.lru === undefined) return;
    const entry: Entry = { sealed: sealed(held, keys.seal), until };
    this.lru.set(keys.lookup, entry, { size: entry.sealed.length + keys.lookup.length + ENTRY_OVERHEAD });
  }

  /** The exchange under way for this key, or `run` started as it: concurrent callers of one key share one call. */
  share(keys: ExchangeKeys, run: () => Promise<HeldToken>): Promise<HeldToken> {
    const under = this.pending.get(keys.lookup);
    if (under !== undefined) return under;
    const started = run().finally(() => this.pending.delete(keys.lookup));
    this.pending.set(keys.lookup, started);
    return started;
  }

  /** Entries held, for tests and stats. */
  get size(): number {
    return this.lru?.size ?? 0;
  }

  clear(): void {
    this.lru?.clear();
  }
}
