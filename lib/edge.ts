// The `express-verified-user/edge` entry: options for apps behind an authenticating proxy (Cloudflare Access, Google
// IAP, AWS ALB), each a function whose result goes to createTokenAuth (docs/edge.md). Re-exports only.
export { cloudflareAccess, type CloudflareAccessOptions } from './edge/cloudflare-access';
export { googleIap, type GoogleIapOptions } from './edge/google-iap';
export { awsAlb, type AwsAlbOptions } from './edge/aws-alb';
export type { EdgeOptions } from './edge/assertion';
