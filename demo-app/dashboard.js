'use strict';
// The live dashboard: it listens on the package's diagnostics channel (express-verified-user:verify, a Node
// TracingChannel) like any operator's tooling would, keeps counts in memory, and serves them as JSON for
// public/dashboard.js to draw. Nothing here reaches into the package: the channel name is its public contract.
// A token that verifies can still be refused by its route (403 insufficient_scope): the TokenAuth's onError hook
// tells, and `countRouteRefusal` counts that request as what it is, not as accepted.
const { AsyncLocalStorage } = require('node:async_hooks');
const diagnostics = require('node:diagnostics_channel');
const path = require('node:path');
const express = require('express');
const { VERIFY_CHANNEL } = require('express-verified-user');

/** Verify times kept for percentiles (a ring), and seconds kept for the timeline. */
const DURATIONS_KEPT = 2000;
const SECONDS_KEPT = 60;

/** One recorder per process: the channel is process-wide, so several apps would count the same events. */
let recorder;

/** Per request: the verification its token got (its second's bucket, whether the cache answered), once it passed. */
const requests = new AsyncLocalStorage();

function createRecorder() {
  const outcomes = {};
  let total = 0;
  let cached = 0;
  const durations = new Float64Array(DURATIONS_KEPT);
  let recorded = 0;
  /**
   * Per-second buckets: { second, ok, cached, forbidden, refused }: `ok` let through (`cached` of them answered from
   * the cache), `forbidden` verified but refused by the route, `refused` not verified.
   */
  const timeline = [];
  const started = new WeakMap();

  function bucket(second) {
    let last = timeline[timeline.length - 1];
    if (last === undefined || last.second !== second) {
      last = { second, ok: 0, cached: 0, forbidden: 0, refused: 0 };
      timeline.push(last);
      while (timeline.length > SECONDS_KEPT) timeline.shift();
    }
    return last;
  }

  function finish(ctx) {
    const begun = started.get(ctx);
    if (begun === undefined) return;
    started.delete(ctx);
    const outcome = ctx.code ?? 'ok';
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    total++;
    if (ctx.cached) cached++;
    durations[recorded++ % DURATIONS_KEPT] = performance.now() - begun;
    const now = bucket(Math.floor(Date.now() / 1000));
    if (outcome !== 'ok') {
      now.refused++;
      return;
    }
    now.ok++;
    if (ctx.cached) now.cached++;
    const request = requests.getStore();
    if (request !== undefined) request.verified = { bucket: now, cached: ctx.cached };
  }

  /** This request's token verified, and its route refused it: move it from `ok` to the refusal's code. */
  function routeRefusal(err) {
    const request = requests.getStore();
    const verified = request?.verified;
    if (verified === undefined) return;
    request.verified = undefined;
    outcomes.ok--;
    outcomes[err.code] = (outcomes[err.code] ?? 0) + 1;
    verified.bucket.ok--;
    if (verified.cached) verified.bucket.cached--;
    verified.bucket.forbidden++;
  }

  const handlers = {
    start: (ctx) => started.set(ctx, performance.now()),
    end: (ctx) => {
      if (!ctx.async) finish(ctx);
    },
    asyncStart: () => undefined,
    asyncEnd: finish,
    error: () => undefined,
  };
  diagnostics.tracingChannel(VERIFY_CHANNEL).subscribe(handlers);

  function percentile(sorted, p) {
    if (sorted.length === 0) return 0;
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  }

  return {
    snapshot() {
      const kept = Array.from(durations.subarray(0, Math.min(recorded, DURATIONS_KEPT))).sort((a, b) => a - b);
      const nowSecond = Math.floor(Date.now() / 1000);
      const byIndex = new Map(timeline.map((b) => [b.second, b]));
      const series = [];
      for (let s = nowSecond - SECONDS_KEPT + 1; s <= nowSecond; s++)
        series.push(byIndex.get(s) ?? { second: s, ok: 0, cached: 0, forbidden: 0, refused: 0 });
      return {
        total,
        outcomes,
        cacheHitRate: total === 0 ? 0 : cached / total,
        // Microseconds: verifications take a few to a few hundred.
        percentiles: {
          p50: percentile(kept, 50) * 1000,
          p90: percentile(kept, 90) * 1000,
          p99: percentile(kept, 99) * 1000,
        },
        samples: kept.length,
        series,
      };
    },
    routeRefusal,
  };
}

/**
 * The demo TokenAuth's `onError`: a failure reported after the request's token verified (403 insufficient_scope,
 * a step-up demand) is counted under its code instead of `ok`. Failures of unverified tokens are the channel's.
 */
function countRouteRefusal(err) {
  recorder?.routeRefusal(err);
}

/** The dashboard's routes: the page at /dashboard and its figures at /dashboard/stats.json. */
function dashboardRouter() {
  recorder ??= createRecorder();
  const router = express.Router();
  // Every request after this router runs with its own store, where the channel's handlers note its verification.
  router.use((_req, _res, next) => requests.run({ verified: undefined }, next));
  router.get('/dashboard', (_req, res) => res.sendFile(path.join(__dirname, 'public', 'dashboard.html')));
  router.get('/dashboard/stats.json', (_req, res) => {
    res.set('Cache-Control', 'no-store').json(recorder.snapshot());
  });
  return router;
}

module.exports = { dashboardRouter, countRouteRefusal };
