// The MCP SDK's own client (1.x) with an in-memory OAuthClientProvider. Its "browser" signs in on the local
// authorization server's login page and allows on its consent page, over HTTP, as a user would.
/* global Request, URLSearchParams -- Node 20 globals */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const REDIRECT_URL = 'http://127.0.0.1:9/callback';

/** A fetch that logs `METHOD /path -> status` of each request, under `who`. */
function loggingFetch(log, who) {
  return async (input, init) => {
    const request = new Request(input, init);
    const answer = await fetch(request);
    log.push(`${who}  ${request.method} ${new URL(request.url).pathname} -> ${answer.status}`);
    return answer;
  };
}

/** Follow the authorization server's pages (at most 12 steps) until it redirects to the client; answer the query. */
async function browse(start, login, jar, log) {
  const send = loggingFetch(log, 'browser    ');
  let url = start.href;
  let form;
  for (let step = 0; step < 12; step += 1) {
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const answer = await send(url, {
      method: form === undefined ? 'GET' : 'POST',
      headers,
      body: form,
      redirect: 'manual',
    });
    for (const cookie of answer.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    form = undefined;
    const location = answer.headers.get('location');
    if (location !== null) {
      const next = new URL(location, url);
      if (next.href.startsWith(REDIRECT_URL)) return next.searchParams;
      url = next.href;
      continue;
    }
    const action = /action="([^"]+)"/.exec(await answer.text())?.[1];
    if (action === undefined) throw new Error(`no form at ${url} (${answer.status})`);
    url = new URL(action, url).href;
    form = action.endsWith('/login') ? new URLSearchParams({ login }).toString() : '';
  }
  throw new Error('the authorization server never redirected back');
}

/** Connect to `url` as `login`; `call(name)` answers a tool's text, finishing one authorization if one is asked. */
export async function connect(url, login, log) {
  const jar = new Map();
  let information, tokens, verifier, discovery, callback;
  const authProvider = {
    redirectUrl: REDIRECT_URL,
    clientMetadata: {
      client_name: 'example client',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    clientInformation: () => information,
    saveClientInformation: (value) => {
      information = value;
    },
    tokens: () => tokens,
    saveTokens: (value) => {
      tokens = value;
    },
    saveCodeVerifier: (value) => {
      verifier = value;
    },
    codeVerifier: () => verifier,
    saveDiscoveryState: (value) => {
      discovery = value;
    },
    discoveryState: () => discovery,
    redirectToAuthorization: async (authorizationUrl) => {
      callback = await browse(authorizationUrl, login, jar, log);
    },
  };
  const makeTransport = () =>
    new StreamableHTTPClientTransport(new URL(url), { authProvider, fetch: loggingFetch(log, 'MCP client ') });
  const finish = async (transport) => {
    const code = callback?.get('code');
    if (!code) throw new Error(`authorization refused: ${callback?.get('error') ?? 'no redirect'}`);
    callback = undefined;
    await transport.finishAuth(code);
  };
  const client = new Client({ name: 'example-client', version: '1.0.0' });
  let transport = makeTransport();
  try {
    await client.connect(transport);
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    await finish(transport);
    transport = makeTransport();
    await client.connect(transport);
  }
  const text = (result) => result.content.find((c) => c.type === 'text')?.text;
  return {
    async call(name) {
      try {
        return text(await client.callTool({ name, arguments: {} }));
      } catch (err) {
        if (!(err instanceof UnauthorizedError)) throw err;
        await finish(transport);
        return text(await client.callTool({ name, arguments: {} }));
      }
    },
    close: () => client.close(),
  };
}
