// Hostile and odd claim shapes against route requirements: a shape other than the one expected grants nothing (403,
// never 401 or 500), hints never carry a value the token held, and a token's 100 000 roles cost one walk per verdict,
// not one per request (counted, not timed: a Proxy counts the reads of the array the verdict cache shares).
import { createServer } from 'node:http';
import request from 'supertest';
import { createTokenAuth, type TokenAuthError } from '../../lib';
import { valueCheck, claimCheck } from '../../lib/authorize/checks';
import { resolveValueSource } from '../../lib/authorize/claim-values';
import { detailCheck, parseDetails } from '../../lib/authorize/details';
import { ROUTE_OWNER } from '../../lib/authorize/refusal';
import { EXPRESS_VERSIONS, jwtOptions } from '../fixtures/express';
import { jwtToken } from '../fixtures/issuer';

const HOSTILE = 'evil\nFORGED line "quoted" \u202e';

describe.each(EXPRESS_VERSIONS)('odd claim shapes through %s', (_name, express) => {
  const refusals: TokenAuthError[] = [];
  const auth = createTokenAuth(jwtOptions(refusals, { maxTokenLength: 4_000_000 }));
  const app = express();
  app.get('/roles', auth.requireVerifiedUser([], { roles: ['admin'] }), (_req, res) => {
    res.json({});
  });
  app.get('/tenant', auth.requireVerifiedUser([], { claims: { tid: 'tenant-1' } }), (_req, res) => {
    res.json({});
  });
  afterAll(() => auth.close());
  beforeEach(() => {
    refusals.length = 0;
  });
  // A token of 100 000 roles is a megabyte: a header Node's default limit (16 KiB) refuses with a 431.
  const server = createServer({ maxHeaderSize: 4_000_000 }, app);
  const call = (path: string, claims: Record<string, unknown>) =>
    request(server)
      .get(path)
      .set('Authorization', `Bearer ${jwtToken(claims)}`);

  it.each<[string, unknown]>([
    ['an object', { admin: true }],
    ['a number', 1],
    ['true', true],
    ['null', null],
    ['nested arrays', [['admin']]],
    ['a SCIM object with a number value', [{ value: 1 }]],
    ['a comma-separated string (one value)', 'admin,user'],
    ['the value with a different case', ['Admin']],
    ['a hostile string', [HOSTILE]],
    ['admin after an element of another shape', [7, 'admin']],
  ])('roles as %s: 403 forbidden, and the hint holds none of it', async (_shape, roles) => {
    const res = await call('/roles', { roles });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ status: 'error', message: 'Forbidden' });
    expect(refusals.map((err) => [err.code, err.reason])).toEqual([['forbidden', 'role']]);
    expect(refusals[0].hint).not.toMatch(/FORGED|evil|Admin|admin,user|\n/);
  });

  it.each<[string, unknown]>([
    ['an object', { id: 'tenant-1' }],
    ['a number', 1],
    ['an array of objects', [{ tid: 'tenant-1' }]],
    ['nested arrays', [['tenant-1']]],
    ['a hostile string', HOSTILE],
  ])('a claims requirement against %s: 403, never the value in the hint', async (_shape, tid) => {
    expect((await call('/tenant', { tid })).status).toBe(403);
    expect(refusals[0].hint).not.toMatch(/FORGED|evil|\n/);
    expect(refusals[0].hint).toMatch(/^expected claim "tid" equal to "tenant-1"/);
  });

  it('100 000 roles: the one asked for at the end is found, request after request, and the hint only counts them', async () => {
    const roles = Array.from({ length: 100_000 }, (_, i) => `r${i}`);
    for (let i = 0; i < 3; i++) expect((await call('/roles', { roles: [...roles, 'admin'] })).status).toBe(200);
    const refused = await call('/roles', { roles });
    expect(refused.status).toBe(403);
    expect(refusals[0].hint).toMatch(/the token's value is an array of 100000 values$/);
    expect(refusals[0].hint).not.toMatch(/r99999/);
  });
});

/** A frozen array behind a Proxy that counts reads of its elements (what a walk of it costs). */
function counted<T>(items: T[]): { array: readonly T[]; reads: () => number } {
  let reads = 0;
  const target = Object.freeze(items);
  const array = new Proxy(target, {
    get(on, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(on, key, receiver) as unknown;
    },
  });
  return { array, reads: () => reads };
}

describe('the work per request is bounded on the cache-hit path', () => {
  it('a roles check walks a frozen array once; later requests look its verdict up', () => {
    const { array, reads } = counted(Array.from({ length: 100_000 }, (_, i) => `r${i}`));
    const check = valueCheck({ all: ['r99999'], any: [] }, resolveValueSource('role', undefined), ROUTE_OWNER);
    const claims = Object.freeze({ roles: array });
    check(claims);
    const first = reads();
    expect(first).toBeGreaterThanOrEqual(100_000);
    for (let i = 0; i < 10; i++) check(claims);
    expect(reads()).toBe(first);
  });

  it('a claims requirement on a long frozen array claim looks it up after one walk', () => {
    const { array, reads } = counted(Array.from({ length: 50_000 }, (_, i) => `t${i}`));
    const check = claimCheck('tid', ['t49999'], ROUTE_OWNER);
    const claims = Object.freeze({ tid: array });
    check(claims);
    const first = reads();
    for (let i = 0; i < 10; i++) check(claims);
    expect(reads()).toBe(first);
  });

  it("an authorization details requirement walks a frozen array's entries once", () => {
    const entries = Array.from({ length: 20_000 }, (_, i) => Object.freeze({ type: `t${i}`, actions: ['a'] }));
    const { array, reads } = counted(entries);
    const [detail] = parseDetails({ type: 't19999', actions: ['a'] }, 'authorizationDetails', 'requireVerifiedUser');
    const check = detailCheck(detail, ROUTE_OWNER);
    const claims = Object.freeze({ authorization_details: array });
    check(claims);
    const first = reads();
    expect(first).toBeGreaterThanOrEqual(20_000);
    for (let i = 0; i < 10; i++) check(claims);
    expect(reads()).toBe(first);
  });
});
