// awsAlb(): its arguments checked at the call (a malformed ARN, a missing clientId: OptionErrors naming them), the
// region's key address, and how its key source travels (a symbol-keyed field: no option joins TokenAuthOptions).
import { createTokenAuth } from '../../lib';
import { awsAlb } from '../../lib/edge';
import { optionErrorOf } from '../fixtures/option-error';

const ARN = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/my-alb/50dc6c495c0c9188';
const GOV = 'arn:aws-us-gov:elasticloadbalancing:us-gov-west-1:123456789012:loadbalancer/app/my-alb/50dc6c495c0c9188';
const base = { signer: ARN, clientId: 'orders', issuer: 'https://idp.example.com' };

describe('awsAlb', () => {
  it('returns options for the ALB: its header, ES256, the issuer, no aud, claims jwt', () => {
    const options = awsAlb(base);
    expect(options).toMatchObject({ issuer: 'https://idp.example.com', audience: false, algorithms: ['ES256'] });
    expect(options.claims).toBe('jwt');
    expect(options.key).toBeUndefined();
    expect(options.getToken?.({ headers: { 'x-amzn-oidc-data': 'a.b.c=' } } as never)).toBe('a.b.c=');
    expect(options.getToken?.({ headers: { authorization: 'Bearer a.b.c' } } as never)).toBeUndefined();
    // The key source rides under a symbol, which a spread keeps and knownFields never sees.
    const spread = { ...options, cache: false as const };
    expect(Object.getOwnPropertySymbols(spread)).toHaveLength(1);
    createTokenAuth(spread).close();
    createTokenAuth(awsAlb({ ...base, signer: [ARN, ARN.replace('my-alb', 'b')], clientId: null })).close();
    createTokenAuth(awsAlb({ ...base, signer: GOV })).close();
  });

  it.each<[string, unknown, string]>([
    ['no options', undefined, ''],
    ['no signer', { clientId: 'orders', issuer: base.issuer }, 'signer'],
    ['a malformed ARN', { ...base, signer: 'arn:aws:elasticloadbalancing:eu-west-1:123:loadbalancer/app/x' }, 'signer'],
    ['a network load balancer', { ...base, signer: ARN.replace('/app/', '/net/') }, 'signer'],
    ['an ARN of another service', { ...base, signer: ARN.replace('elasticloadbalancing', 'ec2') }, 'signer'],
    ['a malformed ARN in a list', { ...base, signer: [ARN, 'alb'] }, 'signer[1]'],
    ['an empty list', { ...base, signer: [] }, 'signer'],
    ['ARNs of two regions', { ...base, signer: [ARN, ARN.replace('eu-west-1', 'us-east-1')] }, 'signer'],
    ['no clientId (null skips it, on purpose)', { signer: ARN, issuer: base.issuer }, 'clientId'],
    ['an empty clientId', { ...base, clientId: '' }, 'clientId'],
    ['no issuer', { signer: ARN, clientId: 'orders' }, 'issuer'],
    ['several issuers', { ...base, issuer: ['a', 'b'] }, 'issuer'],
    ['an http: keysBaseURL', { ...base, keysBaseURL: 'http://keys.example.com' }, 'keysBaseURL'],
    [
      'a China ARN without keysBaseURL',
      { ...base, signer: ARN.replace(/aws:elasticloadbalancing:eu-west-1/, 'aws-cn:elasticloadbalancing:cn-north-1') },
      'keysBaseURL',
    ],
    ['an unknown argument', { ...base, albArn: ARN }, 'albArn'],
  ])('refuses %s with an OptionError naming it', (_what, options, option) => {
    const err = optionErrorOf(() => awsAlb(options as never));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.option).toBe(option);
    expect(err.message).toMatch(/awsAlb/);
  });

  it('refuses a key or an issuerBaseURL beside the preset at createTokenAuth, naming it', () => {
    expect(optionErrorOf(() => createTokenAuth({ ...awsAlb(base), key: { secret: 's'.repeat(32) } })).option).toBe(
      'key',
    );
    expect(
      optionErrorOf(() => createTokenAuth({ ...awsAlb(base), issuerBaseURL: 'https://idp.example.com' })).option,
    ).toBe('issuerBaseURL');
    expect(optionErrorOf(() => createTokenAuth({ ...awsAlb(base), algorithms: ['HS256'] })).option).toBe('algorithms');
  });
});
