import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { SECRET } from '../fixtures/issuer';
import { optionErrorOf } from '../fixtures/option-error';
import { recordingStore } from '../fixtures/rule-store';

const ISSUER = 'https://idp.example.test/realms/acme';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const push = { issuer: ISSUER, audience: 'https://api.example.test', push: { authorization: 'Bearer abc' } };
const credentials = { clientId: 'receiver', clientSecret: 'receiver-secret' };

/** A TokenAuth that the receiver accepts, with `overrides`. */
function tokenAuth(overrides: Partial<TokenAuthOptions> = {}): TokenAuth {
  return createTokenAuth({
    key: { publicKey: keys.publicKey },
    issuer: ISSUER,
    audience: 'api',
    revocation: recordingStore() as never,
    maxLifetime: '1h',
    ...overrides,
  } as TokenAuthOptions);
}

/** The dotted path of the OptionError that `securityEvents(options)` throws. */
function refusedOption(options: unknown, overrides: Partial<TokenAuthOptions> = {}): string {
  const auth = tokenAuth(overrides);
  try {
    return optionErrorOf(() => auth.securityEvents(options as never)).option;
  } finally {
    auth.close();
  }
}

describe('auth.securityEvents() options', () => {
  it.each([
    ['no options object', 'nope', ''],
    ['an unknown option', { transmitters: [push], foo: 1 }, 'foo'],
    ['neither transmitters nor backchannelLogout', {}, 'transmitters'],
    ['transmitters that are no array', { transmitters: push }, 'transmitters'],
    ['a transmitter that is no object', { transmitters: ['x'] }, 'transmitters[0]'],
    ['a transmitter issuer that is no URL', { transmitters: [{ ...push, issuer: 'acme' }] }, 'transmitters[0].issuer'],
    [
      'a transmitter issuer over plain http',
      { transmitters: [{ ...push, issuer: 'http://idp.example.test' }] },
      'transmitters[0].issuer',
    ],
    ['no audience', { transmitters: [{ ...push, audience: undefined }] }, 'transmitters[0].audience'],
    ['neither push nor poll', { transmitters: [{ issuer: ISSUER, audience: 'a' }] }, 'transmitters[0].push'],
    ['push and poll both', { transmitters: [{ ...push, poll: credentials }] }, 'transmitters[0].poll'],
    [
      'push without its Authorization value',
      { transmitters: [{ ...push, push: {} }] },
      'transmitters[0].push.authorization',
    ],
    [
      'a push Authorization value that ends a header line',
      { transmitters: [{ ...push, push: { authorization: 'Bearer a\r\nX: y' } }] },
      'transmitters[0].push.authorization',
    ],
    [
      'an unknown push option',
      { transmitters: [{ ...push, push: { authorization: 'x', token: 'y' } }] },
      'transmitters[0].push.token',
    ],
    [
      'a pushed stream without its endpointUrl',
      { transmitters: [{ ...push, stream: credentials }] },
      'transmitters[0].stream.endpointUrl',
    ],
    [
      'stream credentials without a secret or key',
      { transmitters: [{ ...push, stream: { clientId: 'r', endpointUrl: 'https://api.example.test/e' } }] },
      'transmitters[0].stream.clientSecret',
    ],
    [
      'stream events that are no list of URIs',
      {
        transmitters: [{ ...push, stream: { ...credentials, endpointUrl: 'https://api.example.test/e', events: [] } }],
      },
      'transmitters[0].stream.events',
    ],
    [
      'poll without credentials and no stream',
      { transmitters: [{ issuer: ISSUER, audience: 'a', poll: { interval: '5s' } }] },
      'transmitters[0].poll.clientId',
    ],
    [
      'a poll interval that is no duration',
      { transmitters: [{ issuer: ISSUER, audience: 'a', poll: { ...credentials, interval: 'soon' } }] },
      'transmitters[0].poll.interval',
    ],
    [
      'a poll endpoint over plain http',
      {
        transmitters: [
          { issuer: ISSUER, audience: 'a', poll: { ...credentials, endpoint: 'http://idp.example.test/poll' } },
        ],
      },
      'transmitters[0].poll.endpoint',
    ],
    ['the same transmitter twice', { transmitters: [push, push] }, 'transmitters[1].issuer'],
    ['an action that is no action', { transmitters: [push], actions: { 'urn:x': 'revoke' } }, 'actions.urn:x'],
    [
      'a subject format mapped to a claim other than sub',
      { transmitters: [push], subjects: { email: 'email' } },
      'subjects.email',
    ],
    ['a maxAge that is no duration', { transmitters: [push], maxAge: 'a week' }, 'maxAge'],
    ['backchannelLogout without clientId', { backchannelLogout: { issuer: ISSUER } }, 'backchannelLogout.clientId'],
    [
      "backchannelLogout for an issuer that is not this TokenAuth's",
      { backchannelLogout: { issuer: 'https://other.example.test', clientId: 'c' } },
      'backchannelLogout.issuer',
    ],
  ])('refuses %s, naming its dotted path', (_what, options, path) => {
    expect(refusedOption(options)).toBe(path);
  });

  it('refuses a TokenAuth without revocation, with a store that holds no rules, or without maxLifetime', () => {
    const options = { transmitters: [push] };
    expect(refusedOption(options, { revocation: undefined })).toBe('revocation');
    const jtiOnly = { follow: recordingStore().follow };
    expect(refusedOption(options, { revocation: jtiOnly as never })).toBe('revocation');
    expect(refusedOption(options, { maxLifetime: undefined })).toBe('maxLifetime');
  });

  it('refuses Back-Channel Logout for a TokenAuth that verifies with a shared secret', () => {
    const options = { backchannelLogout: { issuer: ISSUER, clientId: 'c' } };
    expect(refusedOption(options, { key: { secret: SECRET } } as never)).toBe('backchannelLogout');
  });

  it('accepts a complete configuration, with push, poll, streams, actions and subjects', async () => {
    const auth = tokenAuth();
    const events = auth.securityEvents({
      transmitters: [
        { ...push, stream: { ...credentials, endpointUrl: 'https://api.example.test/security-events', timeout: '1s' } },
        { issuer: 'https://okta.example.test', audience: 'api', poll: { ...credentials, interval: '10s' } },
      ],
      backchannelLogout: { issuer: ISSUER, clientId: 'orders-api' },
      actions: { 'https://schemas.openid.net/secevent/caep/event-type/token-claims-change': 'ignore' },
      subjects: { email: 'sub' },
      maxAge: '1d',
    });
    expect(events.stats().transmitters.map((t) => t.delivery)).toEqual(['push', 'poll']);
    await events.close();
    auth.close();
  });
});
