// `events.router()`: RFC 8935 push (POST application/secevent+jwt: 202, 400 with its error codes, 503 when the
// store cannot take the rule) and Back-Channel Logout 1.0 (a form's logout_token: 200, 400 per §2.8, 503) on one path.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { readBody } from './body';
import type { Outcome } from './report';
import { retryAfterOf } from './rules';
import { MAX_SET_BYTES, type SetErrorCode } from './set';

/** A transmitter that pushes: the Authorization value it sends, and where its SETs go. */
export interface PushTarget {
  readonly authorization: string;
  receive(text: string): Promise<Outcome>;
}

/** What the router serves. */
export interface RouterConfig {
  pushers: readonly PushTarget[];
  /** Back-Channel Logout, when configured. */
  logout: ((token: string) => Promise<Outcome>) | undefined;
}

/** Longest wait for a request body: a sender that drips it is answered and let go. */
const BODY_TIMEOUT_MS = 10_000;
/** A form carrying one logout token: the token, its name and a little more. */
const MAX_FORM_BYTES = MAX_SET_BYTES + 1024;

/** What a refusal says to the transmitter (RFC 8935 §2.3 `description`): fixed text, never the SET's. */
const DESCRIPTIONS: Readonly<Record<SetErrorCode, string>> = {
  invalid_request: 'The request or its SET could not be read, or the SET does not meet RFC 8417 and SSF 1.0',
  invalid_key: 'The SET is not signed by a key the transmitter publishes',
  invalid_issuer: 'The SET was not issued by the transmitter this receiver expects',
  invalid_audience: 'The SET is not addressed to this receiver',
  authentication_failed: 'The request does not carry the Authorization value this receiver expects',
  access_denied: 'This receiver takes no pushed SETs from this transmitter',
  invalid_state: 'The verification state is not the one this receiver requested',
};

/** RFC 8935 §2.3: 400 (or another status) with `Content-Language` and `{ "err", "description" }`. */
function refuse(res: Response, err: SetErrorCode, reason: string, status = 400, unread = false): void {
  // A body left unread ends the connection: the next request on it could not be told from the rest of this one.
  if (unread) res.set('Connection', 'close');
  res
    .status(status)
    .set({ 'Content-Language': 'en', 'Cache-Control': 'no-store' })
    .json({ err, description: `${DESCRIPTIONS[err]} (${reason})` });
}

/** 503 with the store's Retry-After: the transmitter comes back later (RFC 8935 leaves retrying to it). */
function unavailable(res: Response, outcome: Extract<Outcome, { status: 'unavailable' }>): void {
  res
    .status(503)
    .set({ 'Retry-After': String(retryAfterOf(outcome.error)), 'Cache-Control': 'no-store' })
    .json({ description: 'The event could not be stored now; send it again later' });
}

/** SHA-256 of a header value: equal-length inputs for a constant-time comparison of any two values. */
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** The media type of a Content-Type, lower case, without parameters. */
function mediaType(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** Build the router of one `securityEvents()`: the POST at its mount path; 405 for other methods there. */
export function createEventsRouter(config: RouterConfig): RequestHandler {
  const pushers = config.pushers.map((target) => ({ target, digest: digest(target.authorization) }));

  async function push(req: Request, res: Response): Promise<void> {
    if (pushers.length === 0) return refuse(res, 'access_denied', 'no-push', 400, true);
    const given = req.headers.authorization;
    if (given === undefined) return refuse(res, 'authentication_failed', 'authorization-missing', 400, true);
    // Every configured value is compared, whatever matched: the time says nothing of which, or how close.
    const offered = digest(given);
    let matched: PushTarget | undefined;
    for (const pusher of pushers) if (timingSafeEqual(pusher.digest, offered)) matched = pusher.target;
    if (matched === undefined) return refuse(res, 'authentication_failed', 'authorization-wrong', 400, true);
    const read = await readBody(req, MAX_SET_BYTES, BODY_TIMEOUT_MS);
    if ('failure' in read) {
      if (read.failure === 'too-large') return refuse(res, 'invalid_request', 'set-too-large', 413, true);
      return refuse(res, 'invalid_request', `body-${read.failure}`, 400, true);
    }
    const outcome = await matched.receive(read.text);
    if (outcome.status === 'accepted') res.status(202).set('Cache-Control', 'no-store').end();
    else if (outcome.status === 'refused') refuse(res, outcome.err, outcome.reason);
    else unavailable(res, outcome);
  }

  /** Back-Channel Logout 1.0 §2.8: 200 once the rule is stored, 400 `invalid_request` for a token refused. */
  async function logout(req: Request, res: Response): Promise<void> {
    res.set('Cache-Control', 'no-store');
    const bad = (reason: string) =>
      res.status(400).json({ error: 'invalid_request', error_description: `The logout token was refused (${reason})` });
    if (config.logout === undefined) {
      bad('no-backchannel-logout');
      return;
    }
    const read = await readBody(req, MAX_FORM_BYTES, BODY_TIMEOUT_MS, 'logout_token');
    if ('failure' in read) {
      res.set('Connection', 'close');
      bad(`body-${read.failure}`);
      return;
    }
    const tokens = new URLSearchParams(read.text).getAll('logout_token');
    if (tokens.length !== 1) {
      bad('logout-token-missing');
      return;
    }
    const outcome = await config.logout(tokens[0]);
    if (outcome.status === 'accepted') res.status(200).end();
    else if (outcome.status === 'refused') bad(outcome.reason);
    else unavailable(res, outcome);
  }

  return (req, res, next) => {
    if (req.path !== '/' && req.path !== '') return next();
    if (req.method !== 'POST') {
      res.status(405).set('Allow', 'POST').end();
      return;
    }
    const type = mediaType(req);
    const handled =
      type === 'application/secevent+jwt'
        ? push(req, res)
        : type === 'application/x-www-form-urlencoded'
          ? logout(req, res)
          : Promise.resolve(refuse(res, 'invalid_request', 'content-type', 415, true));
    handled.catch(next);
  };
}
