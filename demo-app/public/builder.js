'use strict';
/* global FormData, URLSearchParams */ // browser globals (the shared ESLint config lists Node's)
// Builds the authorization link from the form, the way the service's link builder tool does, and keeps the
// "Authorize" button pointing at it.
(function builder() {
  const form = document.getElementById('builder');
  const link = document.getElementById('link');
  const authorize = document.getElementById('authorize');

  function buildLink() {
    const data = new FormData(form);
    const params = new URLSearchParams({
      response_type: data.get('response_type'),
      client_id: data.get('client_id'),
      redirect_uri: data.get('redirect_uri'),
      scope: data.getAll('scope').join(' '),
      providers: data.getAll('providers').join(' '),
      state: window.crypto.randomUUID(),
    });
    const url = `${location.origin}/oauth/authorize?${params}`;
    link.textContent = url;
    link.href = url;
    authorize.href = url;
    return url;
  }

  document.getElementById('build').addEventListener('click', buildLink);
  form.addEventListener('change', buildLink);
  buildLink();
})();
