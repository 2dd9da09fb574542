// The ALB's ARN read (partition, region) and the key address of its region: AWS's regional endpoint, GovCloud's bucket.
import { defaultKeysBase, readSigners } from '../../lib/edge/alb-signer';
import { optionErrorOf } from '../fixtures/option-error';

const arn = (partition: string, region: string) =>
  `arn:${partition}:elasticloadbalancing:${region}:123456789012:loadbalancer/app/my-alb/50dc6c495c0c9188`;

describe('readSigners and defaultKeysBase', () => {
  it.each([
    ['aws', 'eu-west-1', 'https://public-keys.auth.elb.eu-west-1.amazonaws.com/'],
    ['aws', 'ap-southeast-2', 'https://public-keys.auth.elb.ap-southeast-2.amazonaws.com/'],
    ['aws-us-gov', 'us-gov-west-1', 'https://s3-us-gov-west-1.amazonaws.com/aws-elb-public-keys-prod-us-gov-west-1/'],
    ['aws-us-gov', 'us-gov-east-1', 'https://s3-us-gov-east-1.amazonaws.com/aws-elb-public-keys-prod-us-gov-east-1/'],
  ])('reads %s %s, whose keys are under %s', (partition, region, base) => {
    const signers = readSigners(arn(partition, region));
    expect(signers).toMatchObject({ partition, region });
    expect(signers.arns).toEqual(new Set([arn(partition, region)]));
    expect(defaultKeysBase(signers).href).toBe(base);
  });

  it('asks for keysBaseURL in a China region, where AWS documents no key address', () => {
    expect(optionErrorOf(() => defaultKeysBase(readSigners(arn('aws-cn', 'cn-north-1')))).option).toBe('keysBaseURL');
  });
});
