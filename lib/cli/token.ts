// `express-verified-user token`: the claims of a development token from flags and the app's own TOKEN_*
// variables (so the token fits the app), shaped for the claims mode, signed with the key the flags name.
import { randomUUID } from 'node:crypto';
import { resolveClaimsMode, type ClaimsMode } from '../token/claim-modes';
import { signToken } from '../jose/sign';
import { parseDuration } from '../base/duration';
import { misspellingNote } from '../base/env-names';
import { fileSigningKey, secretSigningKey, type CliSigningKey } from './keys';
import { UsageError } from './usage';

/** The flags of `token`, as parsed (strings, or lists for the repeatable ones). */
export interface TokenFlags {
  secret?: string;
  key?: string;
  iss?: string;
  aud?: string;
  sub?: string;
  scope?: string[];
  exp?: string;
  claims?: string;
  claim?: string[];
  alg?: string;
  kid?: string;
}

/** The first entry of a comma-separated variable, unless it is unset, empty or "false". */
function firstOf(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const first = env[name]
    ?.split(',')
    .map((s) => s.trim())
    .find((s) => s !== '');
  return first === undefined || first === 'false' ? undefined : first;
}

function modeOf(flags: TokenFlags, env: NodeJS.ProcessEnv): ClaimsMode {
  const named = flags.claims ?? env.TOKEN_CLAIMS?.trim();
  if (named === undefined || named === '')
    return firstOf(env, 'TOKEN_ISSUER_BASE_URL') === undefined ? 'strict' : 'jwt';
  try {
    return resolveClaimsMode(named, false);
  } catch {
    throw new UsageError(`${flags.claims === undefined ? 'TOKEN_CLAIMS' : '--claims'} must be strict, jwt or at+jwt`);
  }
}

function signingKey(flags: TokenFlags, env: NodeJS.ProcessEnv): CliSigningKey {
  if (flags.secret !== undefined && flags.key !== undefined) throw new UsageError('give --secret or --key, not both');
  if (flags.key !== undefined) return fileSigningKey(flags.key, flags.alg, flags.kid);
  const secret = flags.secret ?? env.TOKEN_SECRET;
  if (secret === undefined || secret === '') {
    throw new UsageError(
      `no signing key: pass --secret <secret> or --key <file>, or set TOKEN_SECRET${misspellingNote('TOKEN_SECRET', env)}`,
    );
  }
  const key = secretSigningKey(secret, flags.secret === undefined ? 'TOKEN_SECRET' : '--secret', flags.alg);
  return { ...key, kid: flags.kid };
}

/** A `--claim name=value`: the value as JSON when it parses, else the string. */
function extraClaim(entry: string): [string, unknown] {
  const at = entry.indexOf('=');
  if (at <= 0)
    throw new UsageError('--claim takes name=value (such as --claim tenant=acme or --claim roles=["admin"])');
  const raw = entry.slice(at + 1);
  try {
    return [entry.slice(0, at), JSON.parse(raw)];
  } catch {
    return [entry.slice(0, at), raw];
  }
}

/** Run each step, gathering their UsageErrors, so that one run names every problem of the command line. */
function gathered<T extends unknown[]>(steps: { [K in keyof T]: () => T[K] }): T {
  const problems: string[] = [];
  const results = steps.map((step) => {
    try {
      return step();
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      problems.push(err.message);
      return undefined;
    }
  });
  if (problems.length > 0) throw new UsageError(problems.join('\nexpress-verified-user: '));
  return results as T;
}

function required(value: string | undefined, flag: string, variable: string, env: NodeJS.ProcessEnv): string {
  if (value !== undefined && value !== '') return value;
  throw new UsageError(
    `no ${flag.slice(2)}: pass ${flag} <value> or set ${variable} (what your app accepts)${misspellingNote(variable, env)}`,
  );
}

function lifetimeOf(exp: string | undefined): number {
  let lifetime: number;
  try {
    lifetime = parseDuration(exp ?? '10m', '--exp');
  } catch {
    throw new UsageError('--exp must be a duration with a unit, such as 90s, 10m, 2h or 7d');
  }
  if (lifetime <= 0) throw new UsageError('--exp must be longer than 0 seconds');
  return Math.ceil(lifetime);
}

/** The payload of a development token, `now` in seconds. */
export function tokenPayload(
  flags: TokenFlags,
  env: NodeJS.ProcessEnv,
  now: number,
): { payload: Record<string, unknown>; mode: ClaimsMode } {
  const [mode, iss, aud, lifetime] = gathered<[ClaimsMode, string, string, number]>([
    () => modeOf(flags, env),
    () =>
      required(
        flags.iss ?? firstOf(env, 'TOKEN_ISSUER') ?? firstOf(env, 'TOKEN_ISSUER_BASE_URL'),
        '--iss',
        'TOKEN_ISSUER',
        env,
      ),
    () => required(flags.aud ?? firstOf(env, 'TOKEN_AUDIENCE'), '--aud', 'TOKEN_AUDIENCE', env),
    () => lifetimeOf(flags.exp),
  ]);
  const scopes = (flags.scope ?? []).flatMap((entry) => entry.split(/[\s,]+/)).filter((s) => s !== '');
  const scopeClaim = firstOf(env, 'TOKEN_SCOPE_CLAIM') ?? (mode === 'strict' ? 'scopes' : 'scope');
  const payload: Record<string, unknown> = { iss, aud, iat: now, exp: now + lifetime, jti: randomUUID() };
  if (mode === 'strict') {
    Object.assign(payload, {
      providers: {},
      metadata: { createdAt: new Date(now * 1000).toISOString(), authorizer: 'express-verified-user token' },
      sub: flags.sub ?? null,
    });
  } else if (mode === 'at+jwt') {
    Object.assign(payload, { sub: flags.sub ?? 'dev-user', client_id: 'express-verified-user-cli' });
  } else if (flags.sub !== undefined) {
    payload.sub = flags.sub;
  }
  if (mode === 'strict' || scopes.length > 0) payload[scopeClaim] = scopeClaim === 'scope' ? scopes.join(' ') : scopes;
  for (const entry of flags.claim ?? []) {
    const [name, value] = extraClaim(entry);
    payload[name] = value;
  }
  return { payload, mode };
}

/** The signed token `token` prints. */
export function mintToken(flags: TokenFlags, env: NodeJS.ProcessEnv, now = Math.floor(Date.now() / 1000)): string {
  const [{ payload, mode }, key] = gathered<[ReturnType<typeof tokenPayload>, CliSigningKey]>([
    () => tokenPayload(flags, env, now),
    () => signingKey(flags, env),
  ]);
  const header: Record<string, unknown> = key.kid === undefined ? {} : { kid: key.kid };
  if (mode === 'at+jwt') header.typ = 'at+jwt';
  return signToken(payload, key.key, key.alg, header);
}
