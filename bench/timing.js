'use strict';
// One timing loop for the in-process benchmarks (micro.js, jwks-approach.js).

/** The median of a list of numbers. */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

/**
 * Median ns per call of fn(i) over `samples` timed samples of about `seconds` each. A call that returns a promise
 * is awaited before the next; a synchronous call is not, so that no await is timed for it.
 */
async function nsPerCall(fn, { seconds, samples = 5, batch = 64 }) {
  const results = [];
  let i = 0;
  for (let s = 0; s < samples; s++) {
    const start = process.hrtime.bigint();
    const stop = start + BigInt(Math.round(seconds * 1e9));
    let n = 0;
    let now = start;
    while (now < stop) {
      for (let k = 0; k < batch; k++) {
        const out = fn(i++);
        if (out !== undefined && out !== null && typeof out.then === 'function') await out;
      }
      n += batch;
      now = process.hrtime.bigint();
    }
    results.push(Number(now - start) / n);
  }
  return median(results);
}

module.exports = { median, nsPerCall };
