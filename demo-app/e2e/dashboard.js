'use strict';
// The dashboard part of the browser test: open /dashboard, send verifications from outside the page (accepted,
// repeated so the cache answers, and forged), and check that the page's figures and charts follow them.
const path = require('node:path');

/** Run the dashboard checks on an open page of the running demo; `check`, `assert` and `equal` come from run.js. */
async function dashboardChecks({ page, demo, check, assert, equal, artifacts }) {
  const api = `${demo.url}api/me`;
  const call = (token) => fetch(api, { headers: { Authorization: `Bearer ${token}` } }).then((res) => res.status);
  const figure = async (id) => ((await page.locator(`#${id}`).textContent()) ?? '').trim();
  const count = (text) => Number(text.replace(/\D/g, ''));

  await check('dashboard: the page loads and shows the verifications made so far', async () => {
    await page.goto(`${demo.url}dashboard`);
    await page.waitForSelector('body[data-total]');
    assert(count(await figure('total')) >= 0, 'a total is shown');
  });

  await check('dashboard: its figures and charts follow new verifications (accepted, cached, refused)', async () => {
    const before = {
      total: count(await figure('total')),
      ok: count(await figure('ok')),
      refused: count(await figure('refused')),
    };
    const forged = `${demo.token.slice(0, -6)}${demo.token.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA'}`;
    for (let i = 0; i < 6; i++) equal(await call(demo.token), 200, 'status of a valid token');
    for (let i = 0; i < 3; i++) equal(await call(forged), 401, 'status of a forged token');
    await page.waitForFunction((n) => Number(document.body.dataset.total) >= n, before.total + 9, { timeout: 5000 });
    equal(count(await figure('ok')), before.ok + 6, 'accepted count');
    equal(count(await figure('refused')), before.refused + 3, 'refused count');
    assert(count(await figure('hit-rate')) > 0, `cache hit rate shown: ${await figure('hit-rate')}`);
    assert(/µs|ms/.test(await figure('p50')), `median verify time shown: ${await figure('p50')}`);
    const outcomes = await page.locator('#outcomes text').allTextContents();
    assert(outcomes.includes('ok') && outcomes.includes('invalid_token'), `outcome bars: ${outcomes.join(', ')}`);
    assert((await page.locator('#timeline rect').count()) > 0, 'the timeline has bars');
    assert((await page.locator('#percentiles rect').count()) === 3, 'three percentile bars');
    const html = await page.content();
    assert(!html.includes(demo.token.split('.')[2]), 'no token on the page');
  });

  await check(
    'dashboard: a verified token its route refuses (403) counts as insufficient_scope, not accepted',
    async () => {
      const admin = (token) =>
        fetch(`${demo.url}api/admin`, { headers: { Authorization: `Bearer ${token}` } }).then((res) => res.status);
      /** The value of the insufficient_scope bar (0 when there is none yet): the demo's pages made some 403s already. */
      const forbidden = async () => {
        const bars = await page.locator('#outcomes text').allTextContents();
        const at = bars.indexOf('insufficient_scope');
        return at < 0 ? 0 : count(bars[at + 1] ?? '');
      };
      const before = {
        total: count(await figure('total')),
        ok: count(await figure('ok')),
        refused: count(await figure('refused')),
        forbidden: await forbidden(),
      };
      for (let i = 0; i < 4; i++) equal(await admin(demo.token), 403, 'status of a valid token at /api/admin');
      await page.waitForFunction((n) => Number(document.body.dataset.total) >= n, before.total + 4, { timeout: 5000 });
      equal(count(await figure('ok')), before.ok, 'accepted count (unchanged by 403s)');
      equal(count(await figure('refused')), before.refused + 4, 'refused count');
      const bars = await page.locator('#outcomes text').allTextContents();
      assert(bars.includes('insufficient_scope'), `an insufficient_scope bar: ${bars.join(', ')}`);
      equal(await forbidden(), before.forbidden + 4, 'the insufficient_scope bar counts the four 403s');
      const fills = await page
        .locator('#timeline rect')
        .evaluateAll((rects) => rects.map((r) => r.getAttribute('fill')));
      assert(
        fills.includes('#8e5cc4'),
        `the timeline shows the 403s in their own colour: ${[...new Set(fills)].join(' ')}`,
      );
    },
  );

  await check('dashboard: screenshot saved', async () => {
    await page.screenshot({ path: path.join(artifacts, 'demo-dashboard.png'), fullPage: true });
  });
}

module.exports = { dashboardChecks };
