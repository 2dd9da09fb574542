'use strict';
/* global FormData, URLSearchParams */ // browser globals (the shared ESLint config lists Node's)
// Builds the authorization link from the form (code flow, PKCE S256, a fresh state), the way the service's link
// builder tool does, and keeps the "Authorize" button pointing at it.
(function builder() {
  const form = document.getElementById('builder');
  const link = document.getElementById('link');
  const authorize = document.getElementById('authorize');

  async function authorizationUrl({ scope, providers, demoToken }) {
    const data = new FormData(form);
    const { state, challenge } = await window.demoPkce.begin();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: data.get('client_id'),
      redirect_uri: data.get('redirect_uri'),
      scope,
      providers,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    if (demoToken) params.set('demo_token', demoToken);
    return `${location.origin}/oauth/authorize?${params}`;
  }

  async function buildLink() {
    const data = new FormData(form);
    try {
      const url = await authorizationUrl({
        scope: data.getAll('scope').join(' '),
        providers: data.getAll('providers').join(' '),
      });
      link.textContent = url;
      link.href = url;
      authorize.href = url;
      document.body.dataset.link = 'ready';
    } catch (err) {
      link.textContent = err.message;
      document.body.dataset.link = 'failed';
    }
  }

  // The failure examples build their own link (with its own state and verifier) when followed.
  for (const example of document.querySelectorAll('a[data-demo-token], a[data-scope]')) {
    example.addEventListener('click', async (event) => {
      event.preventDefault();
      location.assign(
        await authorizationUrl({
          scope: example.dataset.scope ?? new FormData(form).getAll('scope').join(' '),
          providers: example.dataset.providers ?? new FormData(form).getAll('providers').join(' '),
          demoToken: example.dataset.demoToken,
        }),
      );
    });
  }

  document.getElementById('build').addEventListener('click', buildLink);
  form.addEventListener('change', buildLink);
  buildLink();
})();
