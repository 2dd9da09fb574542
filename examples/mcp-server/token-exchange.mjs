// RFC 8693 token exchange for oidc-provider 9, registered through its own `registerGrantType`: a client trades an
// access token issued to its users *for it* (the subject token's `aud` must be the client's own resource) for a token
// to a service its policy allows, issued by the provider's own AccessToken machinery with an `act` claim naming the
// client (RFC 8693 §4.1). Used by authorization-server.mjs; docs/exchange.md shows the same registration.
import { createPublicKey, verify } from 'node:crypto';
import { errors } from 'oidc-provider';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const PARAMETERS = [
  'audience',
  'resource',
  'scope',
  'requested_token_type',
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
];
const { InvalidRequest, InvalidScope, InvalidTarget, UnauthorizedClient } = errors;

/** The claims of a JWT access token this provider signed with `key` (RS256, `at+jwt`), or undefined. */
function ownJwtClaims(token, { key, kid, issuer, now }) {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    if (header.alg !== 'RS256' || header.typ !== 'at+jwt' || header.kid !== kid) return undefined;
    const good = verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2], 'base64url'));
    if (!good) return undefined;
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (claims.iss !== issuer || typeof claims.exp !== 'number' || claims.exp <= now) return undefined;
    return claims;
  } catch {
    return undefined;
  }
}

/** The claims of an opaque access token this provider stored (AccessToken or ClientCredentials), or undefined. */
async function storedClaims(provider, token) {
  const found = (await provider.AccessToken.find(token)) ?? (await provider.ClientCredentials.find(token));
  if (found === undefined || found.isExpired) return undefined;
  return { sub: found.accountId ?? found.clientId, aud: found.aud, exp: found.exp, act: found.extra?.act };
}

/**
 * Register the grant on `provider`. `policy.get(clientId)` answers `{ resource, targets }`: the resource the client's
 * own subject tokens are audienced to, and the targets it may exchange them for, each with the scopes it may ask.
 * `log(line)` records each exchange's outcome. `ttl` is the longest life of an issued token, in seconds.
 */
export function registerTokenExchange(provider, { signingKey, issuer, policy, ttl, log }) {
  const key = createPublicKey({ key: signingKey, format: 'jwk' });

  async function tokenExchange(ctx) {
    const { params, client } = ctx.oidc;
    const target = [params.resource ?? [], params.audience ?? []].flat();
    try {
      const allowed = policy.get(client.clientId);
      if (allowed === undefined) throw new UnauthorizedClient('this client may not exchange tokens');
      // RFC 8693 §2.2.2: an unacceptable subject (or actor) token is `invalid_request`.
      if (params.subject_token_type !== ACCESS_TOKEN) throw new InvalidRequest('subject_token_type not supported');
      if (typeof params.subject_token !== 'string') throw new InvalidRequest('subject_token missing');
      if (params.actor_token !== undefined) throw new InvalidRequest('actor tokens are not accepted');
      if (params.requested_token_type !== undefined && params.requested_token_type !== ACCESS_TOKEN)
        throw new InvalidRequest('only access tokens are issued');
      const now = Math.floor(Date.now() / 1000);
      const subject =
        ownJwtClaims(params.subject_token, { key, kid: signingKey.kid, issuer, now }) ??
        (await storedClaims(provider, params.subject_token));
      if (subject === undefined) throw new InvalidRequest('subject_token is invalid');
      // Only a token issued to this client's users may be exchanged by it, never one it merely saw.
      const audiences = [subject.aud].flat();
      if (!audiences.includes(allowed.resource)) throw new InvalidRequest('subject_token is not for this client');
      if (target.length !== 1) throw new InvalidTarget('name exactly one resource or audience');
      const scopes = allowed.targets[target[0]];
      if (scopes === undefined) throw new InvalidTarget('this client may not exchange tokens for that target');
      const asked = [...ctx.oidc.requestParamScopes];
      const denied = asked.filter((scope) => !scopes.includes(scope));
      if (denied.length > 0) throw new InvalidScope('scope not allowed for that target', denied.join(' '));

      const resourceServer = new provider.ResourceServer(target[0], {
        audience: target[0],
        scope: scopes.join(' '),
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      });
      const token = new provider.AccessToken({
        accountId: subject.sub,
        client,
        resourceServer,
        scope: (asked.length > 0 ? asked : scopes).join(' '),
        // Never outlives the token it was exchanged for.
        expiresIn: Math.max(1, Math.min(ttl, subject.exp - now)),
      });
      // RFC 8693 §4.1: this client acts for the subject; an actor the subject token named comes before it.
      token.extra = {
        act: subject.act === undefined ? { sub: client.clientId } : { sub: client.clientId, act: subject.act },
      };
      ctx.oidc.entity('AccessToken', token);
      const value = await token.save();
      log(`token exchange by ${client.clientId} for ${target[0]}: issued (sub ${subject.sub}, ${token.expiration} s)`);
      ctx.body = {
        access_token: value,
        issued_token_type: ACCESS_TOKEN,
        token_type: token.tokenType,
        expires_in: token.expiration,
        scope: token.scope,
      };
    } catch (err) {
      log(
        `token exchange by ${client.clientId} for ${target.join(' ') || '-'}: refused ${err.error ?? 'server_error'}`,
      );
      throw err;
    }
  }

  provider.registerGrantType(TOKEN_EXCHANGE, tokenExchange, PARAMETERS, ['audience', 'resource']);
}

/** For the provider's `extraTokenClaims`: the `act` an exchange put on its token (it reaches JWT and opaque alike). */
export function exchangeClaims(_ctx, token) {
  return token.extra;
}
