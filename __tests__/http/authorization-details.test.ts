// RFC 9396 authorization details as routes require them, through real Express 4 and 5 apps, on tokens carrying the
// RFC's own examples (§2 figures, §2.2's common data fields, §6.1's privileges, §7.1's enriched details): met by
// one entry, strings compared exactly, type-specific subsumption left to `allow`, odd shapes granting nothing.
import request from 'supertest';
import {
  createTokenAuth,
  type AuthorizationDetailRequirement,
  type RouteOptions,
  type TokenAuthError,
} from '../../lib';
import { EXPRESS_VERSIONS, jwtOptions } from '../fixtures/express';
import { jwtToken } from '../fixtures/issuer';

/** RFC 9396 §2, Figure 2 (and §7's token response): a payment initiation. */
const PAYMENT = {
  type: 'payment_initiation',
  actions: ['initiate', 'status', 'cancel'],
  locations: ['https://example.com/payments'],
  instructedAmount: { currency: 'EUR', amount: '123.50' },
  creditorName: 'Merchant A',
  creditorAccount: { iban: 'DE02100100109307118603' },
  remittanceInformationUnstructured: 'Ref Number Merchant',
};

/** RFC 9396 §2, Figure 3 (§3, Figure 9): account information and a payment, in one request. */
const ACCOUNTS_AND_PAYMENT = [
  {
    type: 'account_information',
    actions: ['list_accounts', 'read_balances', 'read_transactions'],
    locations: ['https://example.com/accounts'],
  },
  PAYMENT,
];

/** RFC 9396 §2.2, Figures 5 and 6: common data fields, in one object and in two. */
const CUSTOMER_ONE = [
  {
    type: 'customer_information',
    locations: ['https://example.com/customers'],
    actions: ['read', 'write'],
    datatypes: ['contacts', 'photos'],
  },
];
const CUSTOMER_TWO = [
  {
    type: 'customer_information',
    locations: ['https://example.com/customers'],
    actions: ['read'],
    datatypes: ['contacts'],
  },
  {
    type: 'customer_information',
    locations: ['https://example.com/customers'],
    actions: ['write'],
    datatypes: ['photos'],
  },
];

/** RFC 9396 §2.2, Figure 7: common and extension fields of two fictitious APIs. */
const PHOTO_AND_FINANCE = [
  {
    type: 'photo-api',
    actions: ['read', 'write'],
    locations: ['https://server.example.net/', 'https://resource.local/other'],
    datatypes: ['metadata', 'images'],
    geolocation: [
      { lat: -32.364, lng: 153.207 },
      { lat: -35.364, lng: 158.207 },
    ],
  },
  { type: 'financial-transaction', actions: ['withdraw'], identifier: 'account-14-32-32-3', currency: 'USD' },
];

/** RFC 9396 §6.1, Figure 13: `admin` privileges at an API. */
const ADMIN = [{ type: 'example_api', privileges: ['admin'] }];

/** RFC 9396 §7.1, Figure 19: details the authorization server enriched with an identifier and a location. */
const MEDICAL = [
  {
    type: 'medical_record',
    sens: ['HIV', 'ETH', 'MART'],
    actions: ['read'],
    datatypes: ['Patient', 'Observation', 'Appointment'],
    identifier: 'patient-541235',
    locations: ['https://records.example.com/'],
  },
];

describe.each(EXPRESS_VERSIONS)('authorizationDetails through %s', (_name, express) => {
  const refusals: TokenAuthError[] = [];
  beforeEach(() => {
    refusals.length = 0;
  });

  async function status(options: RouteOptions, details: unknown): Promise<number> {
    const auth = createTokenAuth(jwtOptions(refusals));
    const app = express();
    app.get('/pay', auth.requireVerifiedUser([], options), (_req, res) => {
      res.json({});
    });
    const res = await request(app)
      .get('/pay')
      .set('Authorization', `Bearer ${jwtToken({ authorization_details: details })}`);
    auth.close();
    if (res.status === 403) expect(res.body).toEqual({ status: 'error', message: 'Forbidden' });
    return res.status;
  }
  const detailed = (authorizationDetails: AuthorizationDetailRequirement | AuthorizationDetailRequirement[]) => ({
    authorizationDetails,
  });

  it('a payment initiation: its type, an action and its location', async () => {
    const wanted = { type: 'payment_initiation', actions: ['initiate'], locations: ['https://example.com/payments'] };
    expect(await status(detailed(wanted), [PAYMENT])).toBe(200);
    expect(await status(detailed({ ...wanted, actions: ['initiate', 'cancel'] }), [PAYMENT])).toBe(200);
    expect(await status(detailed({ ...wanted, actions: ['refund'] }), [PAYMENT])).toBe(403);
    expect(await status(detailed({ ...wanted, type: 'Payment_Initiation' }), [PAYMENT])).toBe(403);
  });

  it('strings compare exactly (RFC 9396 §12): no case folding, no trailing-slash or URL normalisation', async () => {
    for (const location of [
      'https://EXAMPLE.com/payments',
      'https://example.com/payments/',
      'https://example.com:443/payments',
    ])
      expect(await status(detailed({ type: 'payment_initiation', locations: [location] }), [PAYMENT])).toBe(403);
    expect(await status(detailed({ type: 'payment_initiation', actions: ['Initiate'] }), [PAYMENT])).toBe(403);
  });

  it('several requirements, each met by its own entry; one entry must meet all of a requirement', async () => {
    const both = [
      { type: 'account_information', actions: ['list_accounts', 'read_balances'] },
      { type: 'payment_initiation', actions: ['status'] },
    ];
    expect(await status(detailed(both), ACCOUNTS_AND_PAYMENT)).toBe(200);
    // `initiate` is granted, but for payments: not for account information.
    expect(await status(detailed({ type: 'account_information', actions: ['initiate'] }), ACCOUNTS_AND_PAYMENT)).toBe(
      403,
    );
    expect(refusals[0].hint).toMatch(/holds 2 entries, 1 of that type$/);
    expect(refusals[0].hint).not.toMatch(/Merchant|DE021|123\.50/);
  });

  it('common data fields: the product within one object, never across two (RFC 9396 §2.2)', async () => {
    const writeContacts = { type: 'customer_information', actions: ['write'], datatypes: ['contacts'] };
    expect(await status(detailed(writeContacts), CUSTOMER_ONE)).toBe(200);
    expect(await status(detailed(writeContacts), CUSTOMER_TWO)).toBe(403);
    expect(await status(detailed({ ...writeContacts, datatypes: ['photos'] }), CUSTOMER_TWO)).toBe(200);
  });

  it('one of the listed locations, datatypes all, an identifier exactly; an entry without locations meets no location', async () => {
    const photo = {
      type: 'photo-api',
      locations: ['https://nowhere.example/', 'https://resource.local/other'],
      datatypes: ['images'],
    };
    expect(await status(detailed(photo), PHOTO_AND_FINANCE)).toBe(200);
    const withdraw = { type: 'financial-transaction', actions: ['withdraw'], identifier: 'account-14-32-32-3' };
    expect(await status(detailed(withdraw), PHOTO_AND_FINANCE)).toBe(200);
    expect(await status(detailed({ ...withdraw, identifier: 'account-14-32-32-4' }), PHOTO_AND_FINANCE)).toBe(403);
    expect(await status(detailed({ ...withdraw, locations: ['https://bank.example/'] }), PHOTO_AND_FINANCE)).toBe(403);
  });

  it('privileges: `admin` meets a privileges requirement; what it subsumes (§6.1) is decided in allow', async () => {
    expect(await status(detailed({ type: 'example_api', privileges: ['admin'] }), ADMIN)).toBe(200);
    expect(await status(detailed({ type: 'example_api', actions: ['read'] }), ADMIN)).toBe(403);
    const subsumes: RouteOptions = {
      allow: (claims) =>
        Array.isArray(claims.authorization_details) &&
        claims.authorization_details.some(
          (entry: { type?: unknown; privileges?: unknown; actions?: unknown }) =>
            entry.type === 'example_api' &&
            ((Array.isArray(entry.privileges) && entry.privileges.includes('admin')) ||
              (Array.isArray(entry.actions) && entry.actions.includes('read'))),
        ),
    };
    expect(await status(subsumes, ADMIN)).toBe(200);
  });

  it("enriched details (§7.1): the server's identifier and location", async () => {
    const wanted = {
      type: 'medical_record',
      actions: ['read'],
      datatypes: ['Patient'],
      identifier: 'patient-541235',
      locations: ['https://records.example.com/'],
    };
    expect(await status(detailed(wanted), MEDICAL)).toBe(200);
  });

  it.each<[string, unknown]>([
    ['an object, not an array', PAYMENT],
    ['a string', 'payment_initiation'],
    ['null', null],
    ['absent', undefined],
    ['entries that are not objects', ['payment_initiation', null, 7, [PAYMENT]]],
    ['an entry whose actions is a string', [{ ...PAYMENT, actions: 'initiate' }]],
    ['an entry whose locations is an object', [{ ...PAYMENT, locations: { 0: 'https://example.com/payments' } }]],
  ])('%s grants nothing: 403', async (_shape, details) => {
    const wanted = { type: 'payment_initiation', actions: ['initiate'], locations: ['https://example.com/payments'] };
    expect(await status(detailed(wanted), details)).toBe(403);
    expect(refusals.map((err) => err.reason)).toEqual(['authorization-details']);
  });

  it('entries that are not objects are passed over; another entry may still meet the requirement', async () => {
    expect(await status(detailed({ type: 'payment_initiation' }), [null, 'x', 3, PAYMENT])).toBe(200);
  });
});
