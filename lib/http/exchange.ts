// `auth.exchange()` at the Express edge: only a token this instance verified (on a request its middleware let
// through, or a string `verify()` accepts now) is checked again and traded at the token endpoint (docs/exchange.md).
import type { Request } from 'express';
import { asTokenAuthError, TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import type { ExchangedToken, Exchanger } from '../remote/exchange';
import type { ExchangeTarget } from '../remote/exchange-target';
import type { Authenticator } from './authenticate';

/**
 * `auth.exchange()`: the token a request carried (only one this instance let through), or a string, verified again
 * now, then exchanged; every failure goes to `onError` too. Neither token is ever part of what is reported.
 */
export async function exchangeVerified(
  auth: Authenticator,
  exchanger: Exchanger | undefined,
  reqOrToken: Request | string,
  target: ExchangeTarget,
): Promise<ExchangedToken> {
  if (exchanger === undefined)
    optionError(
      'tokenExchange',
      'exchange() needs option "tokenExchange": this server\'s client at the token endpoint',
    );
  const wanted = exchanger.target(target);
  const req = typeof reqOrToken === 'string' ? undefined : reqOrToken;
  const subject = req === undefined ? (reqOrToken as string) : auth.verifiedToken(req);
  if (subject === undefined) {
    // Never the request's header: only a token this instance verified on it is exchanged.
    const err = new TokenAuthError('missing_token', { reason: 'exchange-request-not-verified' });
    auth.report(err, req);
    throw err;
  }
  const claims = req === undefined ? await auth.verifyToken(subject) : await auth.reverify(subject, req);
  const exp = typeof claims.exp === 'number' ? claims.exp : undefined;
  try {
    return await exchanger.exchange(subject, exp, wanted);
  } catch (err) {
    const failure = asTokenAuthError(err);
    auth.report(failure, req);
    throw failure;
  }
}
