// The `express-verified-user/otel` entry: OpenTelemetry spans and metrics from the diagnostics channels.
import {
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type MeterProvider,
  type Span,
  type TracerProvider,
} from '@opentelemetry/api';
import { fetchChannel, verifyChannel, type FetchEvent, type FetchKind, type VerifyTrace } from './observe/diagnostics';

/** Where `instrumentTokenAuth` sends its spans and metrics; the global providers when not given. */
export interface OtelOptions {
  tracerProvider?: TracerProvider;
  meterProvider?: MeterProvider;
}

/** A running instrumentation: `disable()` unsubscribes it from the channels. */
export interface TokenAuthInstrumentation {
  disable(): void;
}

const SCOPE = 'express-verified-user';
const FETCH_KINDS: readonly FetchKind[] = [
  'key',
  'discovery',
  'upstream',
  'introspection',
  'exchange',
  'ssf',
  'ssf-poll',
];

/** Longest token-supplied string put on a span: a refused token's `iss` is the sender's choice. */
const MAX_ATTRIBUTE = 256;

/** The span attributes of a verification: facts only, never the token or its claims beyond `iss`. */
function verifyAttributes(ctx: VerifyTrace): Attributes {
  const attributes = metricAttributes(ctx);
  if (ctx.reason !== undefined) attributes['express_verified_user.reason'] = ctx.reason.slice(0, MAX_ATTRIBUTE);
  if (ctx.alg !== undefined) attributes['express_verified_user.token.alg'] = ctx.alg.slice(0, MAX_ATTRIBUTE);
  if (ctx.iss !== undefined) attributes['express_verified_user.token.iss'] = ctx.iss.slice(0, MAX_ATTRIBUTE);
  return attributes;
}

/**
 * The metric attributes of a verification: bounded sets only. A refused token's `alg`, `iss` and reason come from
 * whoever sent it, so as labels they would let anyone mint new metric series; `alg` and `iss` label successes only.
 */
function metricAttributes(ctx: VerifyTrace): Attributes {
  const attributes: Attributes = {
    'express_verified_user.outcome': ctx.code ?? 'ok',
    'express_verified_user.cached': ctx.cached,
    'express_verified_user.source': ctx.source,
  };
  if (ctx.code === undefined) {
    if (ctx.alg !== undefined) attributes['express_verified_user.token.alg'] = ctx.alg;
    if (ctx.iss !== undefined) attributes['express_verified_user.token.iss'] = ctx.iss;
  }
  return attributes;
}

/**
 * Turn the package's diagnostics channels (lib/observe/diagnostics.ts) into OpenTelemetry spans and metrics: a span per
 * verification and per remote fetch, `express_verified_user.verifications` (count, by outcome, cached, source),
 * `express_verified_user.verify.duration` and `express_verified_user.fetch.duration` (milliseconds). Cache hits
 * are the verifications with `cached` true. Call once at start-up; the channels cost nothing until it is called.
 */
export function instrumentTokenAuth(options: OtelOptions = {}): TokenAuthInstrumentation {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
  const verifications = meter.createCounter('express_verified_user.verifications', {
    description: 'Token verifications, by outcome',
  });
  const verifyDuration = meter.createHistogram('express_verified_user.verify.duration', {
    description: 'Time to verify a token',
    unit: 'ms',
  });
  const fetchDuration = meter.createHistogram('express_verified_user.fetch.duration', {
    description: 'Time of a remote fetch (keys, discovery, upstream, introspection, exchange, security events)',
    unit: 'ms',
  });

  // Contexts are the channel's own objects: weak maps let an abandoned verification be collected with its span.
  const spans = new WeakMap<VerifyTrace, { span: Span; started: number }>();
  const finish = (ctx: VerifyTrace) => {
    const open = spans.get(ctx);
    if (open === undefined) return;
    spans.delete(ctx);
    const attributes = verifyAttributes(ctx);
    open.span.setAttributes(attributes);
    if (ctx.code !== undefined) open.span.setStatus({ code: SpanStatusCode.ERROR, message: ctx.code });
    open.span.end();
    verifications.add(1, metricAttributes(ctx));
    verifyDuration.record(performance.now() - open.started, {
      'express_verified_user.outcome': attributes['express_verified_user.outcome'],
      'express_verified_user.cached': ctx.cached,
    });
  };
  const handlers = {
    start: (ctx: VerifyTrace) => {
      spans.set(ctx, {
        span: tracer.startSpan('express-verified-user verify', { kind: SpanKind.INTERNAL }),
        started: performance.now(),
      });
    },
    end: (ctx: VerifyTrace) => {
      if (!ctx.async) finish(ctx);
    },
    asyncStart: () => undefined,
    asyncEnd: finish,
    error: () => undefined,
  };
  verifyChannel.subscribe(handlers);

  const onFetch = (message: unknown) => {
    const event = message as FetchEvent;
    const attributes: Attributes = {
      'express_verified_user.fetch.kind': event.kind,
      'express_verified_user.fetch.outcome': event.outcome,
    };
    const now = Date.now();
    const span = tracer.startSpan(`express-verified-user fetch ${event.kind}`, {
      kind: SpanKind.CLIENT,
      startTime: now - event.duration,
      attributes: {
        ...attributes,
        'url.full': event.url,
        ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
      },
    });
    if (event.outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: event.outcome });
    span.end(now);
    fetchDuration.record(event.duration, attributes);
  };
  for (const kind of FETCH_KINDS) fetchChannel(kind).subscribe(onFetch);

  return {
    disable() {
      verifyChannel.unsubscribe(handlers);
      for (const kind of FETCH_KINDS) fetchChannel(kind).unsubscribe(onFetch);
    },
  };
}
