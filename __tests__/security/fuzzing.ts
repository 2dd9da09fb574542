/**
 * The fuzzing properties, shared by the small run inside `npm test` (fuzz.test.ts) and the long one of `npm run fuzz`
 * (scripts/fuzz.js). Each case is a real HTTP request to a real Express app on 127.0.0.1 over a keep-alive connection.
 * The oracle: a 2xx only for a header that carries exactly a genuine token; otherwise exactly the 401 answer of the
 * README's error table (never a 5xx, never another body); and no unhandled rejection anywhere.
 */
import { Agent, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { AUDIENCE, ISSUER, NOW, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';
import { appWith, type ExpressFactory } from '../fixtures/express';
import { closeServer, listen, REFUSAL } from './harness';

/** Counts of one fuzzing run. */
export interface FuzzFigures {
  /** Requests sent, by property. */
  cases: Record<string, number>;
  /** Answers by status. */
  statuses: Record<string, number>;
  /** Unhandled rejections seen while it ran. */
  unhandledRejections: number;
}

/** One app under fuzz: the genuine tokens it accepts and how to reach it. */
interface Target {
  name: string;
  server: Server;
  auth: TokenAuth;
  genuine: readonly string[];
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Characters a Node HTTP client will send in a header value (the rest never reaches the app). */
const HEADER_SAFE = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...`${BASE64URL}.`.split('')) },
  { weight: 3, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\t', '\u00a0', '\u00ff', '\u0080', '=', '+', '/', ',', ' ', '"') },
);

/**
 * The exact bearer credential a header carries, read the way RFC 6750 §2.1 and RFC 9110 §5.6.3 allow:
 * `Bearer`, any case, one or more spaces, one token, optional SP/HTAB around. Undefined for anything else.
 */
function credentialOf(header: string): string | undefined {
  return /^[ \t]*bearer +([^ \t]+)[ \t]*$/i.exec(header)?.[1];
}

/** Send one request; resolves with its status and body text. */
function send(
  server: Server,
  agent: Agent,
  authorization: string | undefined,
): Promise<{ status: number; body: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/me',
        agent,
        headers: authorization === undefined ? {} : { Authorization: authorization },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * The verdict an answer must have: genuine → 200 with the claims; anything else → an exact 401 of the README's
 * error table.
 */
function judge(
  header: string | undefined,
  answer: { status: number; body: string },
  genuine: ReadonlySet<string>,
): string | undefined {
  const credential = header === undefined ? undefined : credentialOf(header);
  if (credential !== undefined && genuine.has(credential)) {
    return answer.status === 200 ? undefined : `genuine token answered ${answer.status}`;
  }
  if (answer.status >= 200 && answer.status < 300) return `a ${answer.status} for a header that is not a genuine token`;
  if (answer.status >= 500) return `a ${answer.status}`;
  if (answer.status === 401) {
    const allowed = [REFUSAL.missing.body, REFUSAL.invalid.body, REFUSAL.expired.body].map((b) => JSON.stringify(b));
    return allowed.includes(answer.body) ? undefined : `a 401 with an unexpected body ${answer.body.slice(0, 80)}`;
  }
  return `status ${answer.status}`;
}

/** Ways to damage a genuine token, each a plausible step of an attacker's tool or a broken client. */
function mutation(genuine: readonly string[]): fc.Arbitrary<{ from: string; to: string }> {
  const token = fc.constantFrom(...genuine);
  const at = (t: string) => fc.integer({ min: 0, max: t.length - 1 });
  const replaceChar = token.chain((t) =>
    fc.tuple(at(t), HEADER_SAFE).map(([i, c]) => ({ from: t, to: t.slice(0, i) + c + t.slice(i + 1) })),
  );
  const insertChar = token.chain((t) =>
    fc
      .tuple(fc.integer({ min: 0, max: t.length }), HEADER_SAFE)
      .map(([i, c]) => ({ from: t, to: t.slice(0, i) + c + t.slice(i) })),
  );
  const deleteRange = token.chain((t) =>
    fc.tuple(at(t), fc.integer({ min: 1, max: 8 })).map(([i, n]) => ({ from: t, to: t.slice(0, i) + t.slice(i + n) })),
  );
  const truncate = token.chain((t) => at(t).map((i) => ({ from: t, to: t.slice(0, i) })));
  const flipPadBit = token.map((t) => {
    const last = BASE64URL.indexOf(t[t.length - 1]);
    return { from: t, to: t.slice(0, -1) + BASE64URL[last ^ 1] };
  });
  const spliceSegments = fc.tuple(token, token, fc.integer({ min: 0, max: 2 })).map(([a, b, i]) => {
    const parts = a.split('.');
    parts[i] = b.split('.')[i];
    return { from: a, to: parts.join('.') };
  });
  // Segments reordered, dropped or repeated: 1 to 5 of them, in any order.
  const shuffleSegments = token.chain((t) =>
    fc
      .array(fc.constantFrom(...t.split('.')), { minLength: 1, maxLength: 5 })
      .map((parts) => ({ from: t, to: parts.join('.') })),
  );
  const extraSegments = fc
    .tuple(token, fc.array(fc.constantFrom('', 'e30', 'AAAA', 'bm9uZQ'), { minLength: 1, maxLength: 3 }))
    .map(([t, more]) => ({ from: t, to: [t, ...more].join('.') }));
  const editJson = fc
    .tuple(
      token,
      fc.integer({ min: 0, max: 1 }),
      fc.constantFrom('alg', 'exp', 'iat', 'nbf', 'iss', 'aud', 'scopes', 'kid', 'crit', 'jti', 'sub'),
      fc.jsonValue({ maxDepth: 2 }),
    )
    .map(([t, i, name, value]) => {
      const parts = t.split('.');
      const decoded = JSON.parse(Buffer.from(parts[i], 'base64url').toString('utf8')) as Record<string, unknown>;
      decoded[name] = value;
      parts[i] = Buffer.from(JSON.stringify(decoded)).toString('base64url');
      return { from: t, to: parts.join('.') };
    });
  const reEncode = token.map((t) => ({ from: t, to: t.replace(/-/g, '+').replace(/_/g, '/') }));
  const changeCase = fc.tuple(token, fc.integer({ min: 0, max: 2 })).map(([t, i]) => {
    const parts = t.split('.');
    parts[i] = parts[i].replace(/[a-z]/, (c) => c.toUpperCase());
    return { from: t, to: parts.join('.') };
  });
  return fc.oneof(
    replaceChar,
    insertChar,
    deleteRange,
    truncate,
    flipPadBit,
    spliceSegments,
    shuffleSegments,
    extraSegments,
    editJson,
    reEncode,
    changeCase,
  );
}

/** An Authorization header built around a (possibly damaged) token, or anything at all. */
function header(genuine: readonly string[]): fc.Arbitrary<string> {
  const scheme = fc.constantFrom(
    'Bearer ',
    'bearer ',
    'BEARER ',
    'Bearer  ',
    'Bearer\t',
    'Bearer',
    'Basic ',
    'Token ',
    ' Bearer ',
    'Bearer:',
    '',
  );
  const tokenish = fc.string({ unit: fc.constantFrom(...`${BASE64URL}.`.split('')), maxLength: 200 });
  const anything = fc.string({ unit: HEADER_SAFE, maxLength: 300 });
  const around = fc.tuple(
    scheme,
    fc.oneof(fc.constantFrom(...genuine), tokenish, anything),
    fc.constantFrom('', ' ', '\t', ',', ', x', ' x', '\u00a0'),
  );
  return fc.oneof(
    around.map(([s, t, tail]) => `${s}${t}${tail}`),
    anything,
    fc.tuple(fc.constantFrom(...genuine), fc.constantFrom(...genuine)).map(([a, b]) => `Bearer ${a} ${b}`),
  );
}

/** Make the apps under fuzz: HS256 and RS256 behind requireVerifiedUser(['identify']), clock fixed. */
async function targets(express: ExpressFactory, cache: TokenAuthOptions['cache']): Promise<Target[]> {
  const rsa = rsaKeys();
  const make = async (name: string, options: TokenAuthOptions, genuine: string[]): Promise<Target> => {
    const auth = createTokenAuth({ ...options, cache });
    return { name, server: await listen(appWith(express, auth, { scopes: ['identify'] })), auth, genuine };
  };
  const base = { issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };
  return Promise.all([
    make(
      'HS256',
      { key: { secret: SECRET }, ...base },
      [0, 1, 2].map(() => sign(shapeB(NOW))),
    ),
    make(
      'RS256',
      { key: { publicKey: rsa.publicKey }, ...base },
      [0, 1].map(() => sign(shapeB(NOW), rsa.privateKey, 'RS256')),
    ),
  ]);
}

/** Options of one fuzzing run. */
export interface FuzzOptions {
  express: ExpressFactory;
  /** Cases per property per app. */
  numRuns: number;
  seed?: number;
  /** Result cache of the apps: off by default, so that every case is verified, not remembered. */
  cache?: TokenAuthOptions['cache'];
}

/**
 * Run every property against every app. Resolves with the figures; rejects (fast-check's report, with the
 * seed and the shrunk counterexample) on the first case that breaks the oracle.
 */
export async function runFuzz(options: FuzzOptions): Promise<FuzzFigures> {
  const figures: FuzzFigures = { cases: {}, statuses: {}, unhandledRejections: 0 };
  const onRejection = () => {
    figures.unhandledRejections++;
  };
  process.on('unhandledRejection', onRejection);
  const apps = await targets(options.express, options.cache ?? false);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const count = (property: string, status: number) => {
    figures.cases[property] = (figures.cases[property] ?? 0) + 1;
    figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
  };
  try {
    for (const app of apps) {
      const genuine = new Set(app.genuine);
      const check = async (property: string, authorization: string | undefined) => {
        const answer = await send(app.server, agent, authorization);
        count(`${app.name} ${property}`, answer.status);
        const wrong = judge(authorization, answer, genuine);
        if (wrong !== undefined) throw new Error(`${app.name}: ${wrong}`);
      };
      const settings = { numRuns: options.numRuns, seed: options.seed };
      await fc.assert(
        fc.asyncProperty(header(app.genuine), (h) => check('random Authorization headers', h)),
        settings,
      );
      await fc.assert(
        fc.asyncProperty(mutation(app.genuine), async ({ from, to }) => {
          await check('mutated genuine tokens', `Bearer ${to}`);
          if (to === from) return;
          // Straight through verify() too: a rejection must be a 401 code, never an internal error.
          await app.auth.verify(to).then(
            () => {
              throw new Error(`${app.name}: verify() accepted a mutated token`);
            },
            (err: { code?: string }) => {
              if (err.code !== 'invalid_token' && err.code !== 'token_expired')
                throw new Error(`${app.name}: verify() rejected with ${String(err.code)}`);
            },
          );
        }),
        settings,
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    agent.destroy();
    process.off('unhandledRejection', onRejection);
    await Promise.all(
      apps.map((app) => {
        app.auth.close();
        return closeServer(app.server);
      }),
    );
  }
  return figures;
}
