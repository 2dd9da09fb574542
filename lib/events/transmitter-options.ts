// One transmitter as `auth.securityEvents()` takes it: its issuer and the audience its SETs name us by, push (the
// Authorization value it sends) or poll (endpoint, interval, credentials), and the stream to manage; checked at once.
import { positiveDuration, type Duration } from '../base/duration';
import { knownFields, type FieldList } from '../base/option-checks';
import { optionError } from '../base/option-error';
import { isObject, isStringArray } from '../base/values';
import { checkRemoteUrl } from '../fetch/remote-url';
import { CLIENT_FIELDS, resolveClientAuth, type ClientAuth, type ClientCredentials } from '../remote/client-auth';
import { ACTED_ON_EVENTS } from './actions';

/** This receiver as a client of the transmitter's authorization server (SSF 1.0 §7.1.1: client credentials). */
export interface TransmitterClientOptions extends ClientCredentials {
  /** `scope` asked for with the token (Keycloak: `ssf.read ssf.manage` unless they are default scopes). */
  scope?: string;
  /** The token endpoint; default: the one the transmitter's issuer publishes (OpenID Connect Discovery, RFC 8414). */
  tokenEndpoint?: string;
}

/** RFC 8935 push: the transmitter POSTs SETs to `events.router()`. */
export interface PushOptions {
  /** The Authorization header value the transmitter sends with each SET (its stream's `authorization_header`). */
  authorization: string;
}

/** RFC 8936 poll: this receiver asks the transmitter for SETs every `interval`. */
export interface PollOptions extends Partial<TransmitterClientOptions> {
  /** The poll endpoint; default: the `endpoint_url` of this receiver's stream at the transmitter. */
  endpoint?: string;
  /** Wait between two polls (default 5 s; errors back off from it up to 5 min). */
  interval?: Duration;
  /** Longest one poll may take, answer included (default 10 s). */
  timeout?: Duration;
}

/** SSF 1.0 §8 stream management: read this receiver's stream, create it if there is none, verify it. */
export interface StreamOptions extends TransmitterClientOptions {
  /** `events_requested` (default: every event type the receiver acts on). */
  events?: string[];
  /** With push: this router's public URL, the stream's `endpoint_url`. */
  endpointUrl?: string;
  /** How long `ready()` waits for the verification event (default 30 s). */
  timeout?: Duration;
  /** The stream's `description`. */
  description?: string;
}

/** One SSF transmitter (Keycloak's realm, Okta, …). */
export interface TransmitterOptions {
  /** Its issuer: the SETs' `iss`, and where its metadata is (SSF 1.0 §7.2). */
  issuer: string;
  /** The SETs' `aud`: how the transmitter names this receiver. */
  audience: string;
  push?: PushOptions;
  poll?: PollOptions;
  stream?: StreamOptions;
}

/** Client credentials resolved: how to authenticate, what to ask for, and where. */
export interface ResolvedClient {
  auth: ClientAuth;
  scope: string | undefined;
  tokenEndpoint: URL | undefined;
}

/** A transmitter's options after checking; durations in seconds. */
export interface ResolvedTransmitter {
  /** `transmitters[i]`, for hints and reports. */
  path: string;
  issuer: string;
  audience: string;
  delivery: 'push' | 'poll';
  push: { authorization: string } | undefined;
  poll: { endpoint: URL | undefined; interval: number; timeout: number; client: ResolvedClient } | undefined;
  stream:
    | { client: ResolvedClient; events: string[]; endpointUrl: URL | undefined; timeout: number; description?: string }
    | undefined;
}

const TRANSMITTER_FIELDS: FieldList<TransmitterOptions> = {
  issuer: true,
  audience: true,
  push: true,
  poll: true,
  stream: true,
};
const PUSH_FIELDS: FieldList<PushOptions> = { authorization: true };
const CLIENT_OPTION_FIELDS = { ...CLIENT_FIELDS, scope: true, tokenEndpoint: true } as const;
const POLL_FIELDS: FieldList<PollOptions> = { ...CLIENT_OPTION_FIELDS, endpoint: true, interval: true, timeout: true };
const STREAM_FIELDS: FieldList<StreamOptions> = {
  ...CLIENT_OPTION_FIELDS,
  events: true,
  endpointUrl: true,
  timeout: true,
  description: true,
};

/** An HTTP field value (RFC 9110 §5.5): visible ASCII, spaces and tabs, nothing that could end the header line. */
const FIELD_VALUE = /^[\x21-\x7E](?:[\x20-\x7E\t]{0,4094}[\x21-\x7E])?$/;

function objectAt(value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) optionError(path, `option "${path}" must be an object`);
  return value;
}

function textAt(value: unknown, path: string, what: string): string {
  if (typeof value !== 'string' || value.trim() === '') optionError(path, `option "${path}" must be ${what}`);
  return value;
}

function resolveClient(value: Record<string, unknown>, path: string, allowInsecureHttp: boolean): ResolvedClient {
  const { scope, tokenEndpoint } = value;
  if (scope !== undefined) textAt(scope, `${path}.scope`, 'a space-separated string of scopes');
  return {
    auth: resolveClientAuth(value, path),
    scope: scope as string | undefined,
    tokenEndpoint:
      tokenEndpoint === undefined
        ? undefined
        : checkRemoteUrl(tokenEndpoint, `${path}.tokenEndpoint`, allowInsecureHttp),
  };
}

function resolveStream(value: unknown, path: string, allowInsecureHttp: boolean): ResolvedTransmitter['stream'] {
  const stream = objectAt(value, path);
  knownFields(stream, STREAM_FIELDS, path);
  const { events, endpointUrl, description } = stream;
  if (events !== undefined && (!isStringArray(events) || events.length === 0 || events.some((e) => e === '')))
    optionError(`${path}.events`, `option "${path}.events" must be a non-empty array of event type URIs`);
  if (description !== undefined) textAt(description, `${path}.description`, 'a string');
  return {
    client: resolveClient(stream, path, allowInsecureHttp),
    events: [...((events as string[] | undefined) ?? ACTED_ON_EVENTS)],
    endpointUrl:
      endpointUrl === undefined ? undefined : checkRemoteUrl(endpointUrl, `${path}.endpointUrl`, allowInsecureHttp),
    timeout: positiveDuration(stream.timeout, `${path}.timeout`, 30),
    ...(description === undefined ? {} : { description: description as string }),
  };
}

function resolvePoll(
  value: unknown,
  path: string,
  stream: ResolvedTransmitter['stream'],
  allowInsecureHttp: boolean,
): ResolvedTransmitter['poll'] {
  const poll = objectAt(value, path);
  knownFields(poll, POLL_FIELDS, path);
  const hasClient = Object.keys(CLIENT_OPTION_FIELDS).some((name) => poll[name] !== undefined);
  if (!hasClient && stream === undefined)
    optionError(
      `${path}.clientId`,
      `option "${path}.clientId" is required: polling authenticates with an access token from the transmitter (SSF 1.0 §7.1.1)`,
    );
  return {
    endpoint:
      poll.endpoint === undefined ? undefined : checkRemoteUrl(poll.endpoint, `${path}.endpoint`, allowInsecureHttp),
    interval: positiveDuration(poll.interval, `${path}.interval`, 5),
    timeout: positiveDuration(poll.timeout, `${path}.timeout`, 10),
    client: hasClient ? resolveClient(poll, path, allowInsecureHttp) : (stream as NonNullable<typeof stream>).client,
  };
}

/** Check `transmitters[index]`; an OptionError naming the dotted path of anything wrong. */
export function resolveTransmitter(value: unknown, index: number, allowInsecureHttp: boolean): ResolvedTransmitter {
  const path = `transmitters[${index}]`;
  const options = objectAt(value, path);
  knownFields(options, TRANSMITTER_FIELDS, path);
  checkRemoteUrl(options.issuer, `${path}.issuer`, allowInsecureHttp);
  // As given: SSF 1.0 §7.2 holds the SETs' iss and the metadata's issuer to be identical to it.
  const issuer = options.issuer as string;
  const audience = textAt(
    options.audience,
    `${path}.audience`,
    "the SETs' aud: how the transmitter names this receiver",
  );
  if (options.push !== undefined && options.poll !== undefined)
    optionError(
      `${path}.poll`,
      `options "${path}.push" and "${path}.poll" exclude each other: a stream has one delivery method`,
    );
  if (options.push === undefined && options.poll === undefined)
    optionError(`${path}.push`, `option "${path}" needs "push" (RFC 8935) or "poll" (RFC 8936)`);
  let push: ResolvedTransmitter['push'];
  if (options.push !== undefined) {
    const given = objectAt(options.push, `${path}.push`);
    knownFields(given, PUSH_FIELDS, `${path}.push`);
    if (typeof given.authorization !== 'string' || !FIELD_VALUE.test(given.authorization))
      optionError(
        `${path}.push.authorization`,
        `option "${path}.push.authorization" must be the Authorization header value the transmitter sends (visible ASCII, at most 4096 characters)`,
      );
    push = { authorization: given.authorization };
  }
  const stream =
    options.stream === undefined ? undefined : resolveStream(options.stream, `${path}.stream`, allowInsecureHttp);
  if (stream !== undefined && push !== undefined && stream.endpointUrl === undefined)
    optionError(
      `${path}.stream.endpointUrl`,
      `option "${path}.stream.endpointUrl" is required with push: the public URL of events.router(), where the transmitter will POST`,
    );
  const poll =
    options.poll === undefined ? undefined : resolvePoll(options.poll, `${path}.poll`, stream, allowInsecureHttp);
  return { path, issuer, audience, delivery: push === undefined ? 'poll' : 'push', push, poll, stream };
}
