'use strict';
/**
 * Child process of bench/security-events.js: POSTs the bodies it is sent (each with its Authorization value) to one
 * URL as application/secevent+jwt, `concurrency` at a time, so that the sender's CPU is not counted in the
 * receiver's; says when it has them, starts when told, and answers with the count of each status.
 */
process.once('message', ({ url, items, concurrency }) => {
  // Loaded: the parent starts counting its CPU, then says go (the bodies' transfer is not counted).
  process.send({ loaded: true });
  process.once('message', () => void run(url, items, concurrency));
});

async function run(url, items, concurrency) {
  const statuses = {};
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const { body, authorization } = items[next++];
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/secevent+jwt', Authorization: authorization },
        body,
      });
      await answer.body?.cancel();
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  process.send({ statuses }, () => process.exit(0));
}
