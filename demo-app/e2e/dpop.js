'use strict';
// The DPoP part of the browser test: proofs made by Chromium's WebCrypto with a non-extractable key are accepted
// (200), and the same proof sent again is refused (401 invalid_dpop_proof). Called from run.js.

/** Run the DPoP checks on `page` against the demo at `url`, reporting through run.js's `check`. */
async function runDpopChecks({ page, url, check, assert, equal }) {
  const requests = [];
  const collect = (req) => {
    if (new URL(req.url()).pathname === '/dpop/api/me') requests.push(req);
  };
  page.on('request', collect);
  try {
    await check('DPoP page: a browser-made proof with a non-extractable key is accepted (200)', async () => {
      await page.goto(new URL('/dpop', url).href);
      await page.click('#run');
      await page.waitForSelector('body[data-state="done"]');
      equal((await page.locator('#extractable').textContent()).trim(), 'false', 'private key extractable');
      equal((await page.locator('#status').textContent()).trim(), '200', 'status with a fresh proof');
      const headers = await requests[0].allHeaders();
      assert(headers.authorization.startsWith('DPoP '), 'Authorization uses the DPoP scheme');
      assert(/^[\w-]+\.[\w-]+\.[\w-]+$/.test(headers.dpop), 'one DPoP proof header');
      const answer = JSON.parse((await page.locator('#answer').textContent()).trim());
      equal(answer.boundTo, (await page.locator('#jkt').textContent()).trim(), 'token bound to the page key');
    });

    await check('DPoP page: the same proof sent again is refused (401 invalid_dpop_proof)', async () => {
      await page.click('#replay');
      await page.waitForSelector('body[data-state="replayed"]');
      equal((await page.locator('#replay-status').textContent()).trim(), '401', 'replay status');
      assert(
        (await page.locator('#replay-challenge').textContent()).includes('error="invalid_dpop_proof"'),
        'DPoP challenge names invalid_dpop_proof',
      );
      equal(
        JSON.parse((await page.locator('#answer').textContent()).trim()).message,
        'Invalid DPoP proof',
        'replay body',
      );
    });
  } finally {
    page.off('request', collect);
  }
}

module.exports = { runDpopChecks };
