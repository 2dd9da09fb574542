// One complete Shape B payload (all six scopes, all three providers linked): what the testing entry mints, and
// what the package's own tests and benchmarks sign. The fields are those of docs/verify-endpoint.md.
import { randomUUID } from 'node:crypto';

/** Whom a sample payload is from and for, and when. */
export interface SampleFor {
  /** `iss` */
  issuer: string;
  /** `aud` */
  audience: string;
  /** `iat`, in seconds. */
  now: number;
  /** Seconds from `iat` to `exp`. */
  lifetime: number;
}

/** A complete Shape B payload issued at `now` with a fresh `jti`: a user who linked Discord, Google and Roblox. */
export function sampleShapeB({ issuer, audience, now, lifetime }: SampleFor): Record<string, unknown> {
  return {
    iss: issuer,
    aud: audience,
    iat: now,
    exp: now + lifetime,
    jti: randomUUID(),
    scopes: ['identify', 'email', 'profile', 'google', 'roblox', 'discord'],
    providers: {
      discord: { id: '80351110224678912', username: 'testuser', avatar: null },
      google: {
        id: '110248495921238986420',
        email: 'test.user@example.com',
        name: 'Test User',
        picture: 'https://example.com/test-user.png',
      },
      roblox: { id: '156', username: 'testuser' },
    },
    metadata: { createdAt: new Date(now * 1000).toISOString(), authorizer: 'express-verified-user/testing' },
    sub: null,
  };
}
