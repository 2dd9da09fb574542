// `auth.securityEvents()` (docs/continuous-access.md): what the identity provider says later — SSF transmitters'
// SETs (CAEP, RISC) by push or poll, and Back-Channel Logout tokens — turned into rules in the revocation store.
// token-auth.ts wires it through `securityEventsOf`, as it wires `auth.exchange()` through http/exchange.ts.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { withoutTrailingSlash } from '../fetch/remote-url';
import type { ResolvedOptions } from '../config/options';
import type { SigningKeySource } from '../keys/source';
import type { TokenSource } from '../remote/source';
import type { RegisteredClaimRules } from '../token/registered';
import { logoutAlgorithms, type LogoutSource } from './logout-token';
import { resolveSecurityEvents, type SecurityEventsOptions } from './options';
import { createEventsRouter } from './push';
import { receiveLogout, type ReceiveContext } from './receive';
import { EventBook, recordOutcome, type EventCounts } from './report';
import { isRuleStore } from './rules';
import { createMemoryReceiverState, receiverStateOf } from './state';
import type { SubjectNaming } from './subjects';
import { createTransmitter, type Transmitter, type TransmitterStats } from './transmitter';

export type { SecurityEventsOptions, BackchannelLogoutOptions } from './options';
export type { TransmitterStats } from './transmitter';

/** What `events.stats()` answers. */
export interface SecurityEventsStats {
  transmitters: TransmitterStats[];
  /** Back-Channel Logout tokens, when configured. */
  backchannelLogout?: EventCounts & { issuer: string };
}

/** A receiver of security events, made by `auth.securityEvents()`. */
export interface SecurityEvents {
  /** Express middleware: mount where transmitters POST SETs and the OP POSTs logout tokens. */
  router(): RequestHandler;
  /**
   * Resolves once every transmitter is set up: its metadata and keys read, its stream read or created and verified
   * (with `stream`), its poll loop answered (with `poll`). Rejects with the cause (a `verification_unavailable`
   * TokenAuthError) after `stream.timeout`; setting up goes on, and the next call waits again.
   */
  ready(): Promise<void>;
  /** Counters per transmitter (received, applied, ignored, refused by reason, …) and stream status. */
  stats(): SecurityEventsStats;
  /** Stop polling (sending the acknowledgements due once), give up the leases, stop timers. */
  close(): Promise<void>;
}

/** What the TokenAuth hands over: its options as resolved, its key source, its report. */
export interface SecurityEventsContext {
  revocation: unknown;
  rules: RegisteredClaimRules;
  /** With `issuerBaseURL`: the configured bases (the token issuers they discover). */
  discoveryBases: readonly string[] | undefined;
  /** The TokenAuth's key source, when it verifies JWTs here (not in upstream mode). */
  keys: SigningKeySource | undefined;
  clock: () => number;
  allowInsecureHttp: boolean;
  report(err: TokenAuthError): void;
}

/** Which issuers' tokens this TokenAuth accepts, and the one it has if it has one. */
function tokenIssuers(context: SecurityEventsContext): { names(iss: string): boolean; only: string | undefined } {
  const { issuer } = context.rules;
  if (context.discoveryBases !== undefined) {
    const bases = context.discoveryBases.map(withoutTrailingSlash);
    return {
      names: (iss) => bases.includes(withoutTrailingSlash(iss)),
      only: bases.length === 1 ? bases[0] : undefined,
    };
  }
  if (issuer === false) return { names: () => true, only: undefined };
  return { names: (iss) => issuer.names(iss), only: issuer.issuers.length === 1 ? issuer.issuers[0] : undefined };
}

/** Build the receiver: every option checked now (an OptionError), then transmitters started. */
export function createSecurityEvents(input: unknown, context: SecurityEventsContext): SecurityEvents {
  const options = resolveSecurityEvents(input, context.allowInsecureHttp);
  const store = context.revocation;
  if (store === undefined)
    optionError(
      'revocation',
      'securityEvents() needs option "revocation": the store its rules go to (createRedisStore, createMemoryRevocationStore)',
    );
  if (!isRuleStore(store))
    optionError(
      'revocation',
      'securityEvents() needs a revocation store with subject and session rules (revokeSubject, revokeSession)',
    );
  const { maxLifetime, clockTolerance } = context.rules;
  if (maxLifetime === undefined)
    optionError(
      'maxLifetime',
      'securityEvents() needs option "maxLifetime": a rule must outlive every token it refuses (docs/continuous-access.md)',
    );
  const issuers = tokenIssuers(context);
  let logout: LogoutSource | undefined;
  if (options.backchannelLogout !== undefined) {
    const { issuer, clientId } = options.backchannelLogout;
    if (context.keys === undefined || logoutAlgorithms(context.keys).size === 0)
      optionError(
        'backchannelLogout',
        "backchannelLogout needs the issuer's public keys (issuerBaseURL, key.jwksUri or key.publicKey) to verify logout tokens",
      );
    if (!issuers.names(issuer))
      optionError(
        'backchannelLogout.issuer',
        `option "backchannelLogout.issuer" must be one of this TokenAuth's issuers: ${JSON.stringify(issuer)} is not`,
      );
    logout = { issuer, clientId, keys: context.keys };
  }

  const state = receiverStateOf(store) ?? createMemoryReceiverState(context.clock);
  const receiveContextFor = (defaultIssuer: string | undefined): ReceiveContext => {
    const naming: SubjectNaming = { claims: options.subjects, names: issuers.names, defaultIssuer };
    return {
      store,
      state,
      actions: options.actions,
      naming,
      tokenLife: maxLifetime + clockTolerance,
      clock: context.clock,
      clockTolerance,
      maxAge: options.maxAge,
    };
  };
  const owner = randomUUID();
  const transmitters: Transmitter[] = options.transmitters.map((config) =>
    createTransmitter(config, {
      // A subject without an iss is about the transmitter's own tokens when it issues ours, else about our one issuer.
      receive: receiveContextFor(issuers.names(config.issuer) ? config.issuer : issuers.only),
      state,
      owner,
      allowInsecureHttp: context.allowInsecureHttp,
      report: context.report,
    }),
  );
  const logoutBook = new EventBook();
  const logoutContext = receiveContextFor(logout?.issuer);
  const receiveLogoutToken = async (token: string) => {
    const outcome = await receiveLogout(token, logout as LogoutSource, logoutContext);
    recordOutcome(outcome, {
      via: 'logout',
      transmitter: (logout as LogoutSource).issuer,
      book: logoutBook,
      now: context.clock(),
      report: context.report,
    });
    return outcome;
  };
  // Setting up starts now: a stream to create and verify does not wait for the app to call ready().
  for (const transmitter of transmitters) void transmitter.ready().catch(context.report);

  return {
    router: () =>
      createEventsRouter({
        pushers: transmitters.flatMap((transmitter) => (transmitter.push === undefined ? [] : [transmitter.push])),
        logout: logout === undefined ? undefined : receiveLogoutToken,
      }),
    ready: () => Promise.all(transmitters.map((transmitter) => transmitter.ready())).then(() => undefined),
    stats: () => ({
      transmitters: transmitters.map((transmitter) => transmitter.stats()),
      ...(logout === undefined ? {} : { backchannelLogout: { issuer: logout.issuer, ...logoutBook.snapshot() } }),
    }),
    close: () => Promise.all(transmitters.map((transmitter) => transmitter.close())).then(() => undefined),
  };
}

/** `auth.securityEvents` for one TokenAuth: each receiver made from its options, closed with it. */
export function securityEventsOf(
  resolved: ResolvedOptions,
  source: TokenSource,
  report: (err: TokenAuthError) => void,
): { create(options: SecurityEventsOptions): SecurityEvents; close(): void } {
  const made = new Set<SecurityEvents>();
  return {
    create(options) {
      const events = createSecurityEvents(options, {
        revocation: resolved.revocation,
        rules: resolved.rules,
        discoveryBases:
          resolved.source.form === 'discovery' ? resolved.source.issuers.map((issuer) => issuer.base) : undefined,
        keys: source.kind === 'jws' ? source : undefined,
        clock: resolved.clock,
        allowInsecureHttp: resolved.allowInsecureHttp,
        report,
      });
      made.add(events);
      return events;
    },
    close() {
      for (const events of made) void events.close();
      made.clear();
    },
  };
}
