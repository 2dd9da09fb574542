// The ALB's ARN, as `awsAlb({ signer })` takes it: its form checked, its region read, and from the region the address
// of the ALB's public keys (docs/edge.md names the AWS pages these addresses come from).
import { optionError, optionName } from '../base/option-error';

/**
 * An Application Load Balancer's ARN: `arn:<partition>:elasticloadbalancing:<region>:<account>:loadbalancer/app/
 * <name>/<id>`, the name up to 32 letters, digits and hyphens, the id 16 hex digits.
 */
const ALB_ARN =
  /^arn:(aws|aws-us-gov|aws-cn):elasticloadbalancing:([a-z]{2}(?:-gov)?-[a-z]+-\d+):\d{12}:loadbalancer\/app\/[A-Za-z0-9-]{1,32}\/[0-9a-f]{16}$/;

const EXAMPLE = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/my-alb/50dc6c495c0c9188';

/** The signers named by `signer`, and the partition and region they share. */
export interface AlbSigners {
  arns: ReadonlySet<string>;
  partition: string;
  region: string;
}

/** `signer`: one ALB ARN or several of one region (the keys are per region); an OptionError otherwise. */
export function readSigners(value: unknown): AlbSigners {
  const name = optionName('signer', 'awsAlb');
  if (value === undefined) optionError('signer', `${name} is required: the ALB's ARN, such as ${EXAMPLE}`);
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) optionError('signer', `${name} must name at least one ALB ARN`);
  const parsed = list.map((arn, i) => {
    const match = typeof arn === 'string' ? ALB_ARN.exec(arn) : null;
    const where = Array.isArray(value) ? `signer[${i}]` : 'signer';
    if (match === null)
      optionError(where, `${optionName(where, 'awsAlb')} is not an Application Load Balancer ARN (such as ${EXAMPLE})`);
    return { partition: match[1], region: match[2] };
  });
  const regions = new Set(parsed.map((p) => `${p.partition}:${p.region}`));
  if (regions.size > 1)
    optionError('signer', `${name} names ALBs of several regions, whose keys are apart: one awsAlb per region`);
  return { arns: new Set(list as string[]), ...parsed[0] };
}

/**
 * Where the ALBs of a region publish their keys, each at this address followed by its `kid`: AWS's regional
 * endpoint, GovCloud's bucket; for China regions no address is documented, so `keysBaseURL` must say it.
 */
export function defaultKeysBase(signers: AlbSigners): URL {
  const { partition, region } = signers;
  if (partition === 'aws') return new URL(`https://public-keys.auth.elb.${region}.amazonaws.com/`);
  if (partition === 'aws-us-gov')
    return new URL(`https://s3-${region}.amazonaws.com/aws-elb-public-keys-prod-${region}/`);
  return optionError(
    'keysBaseURL',
    `${optionName('keysBaseURL', 'awsAlb')} is required for ${region}: AWS documents no key address for its China regions`,
  );
}
