// Certificate-bound tokens (RFC 8705 §3): the client certificate's SHA-256 thumbprint against the token's
// `cnf.x5t#S256`, the certificate read from the TLS socket or the app's getCertificate hook.
import type { Request } from 'express';
import { createHash, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { TokenAuthError } from '../base/errors';
import type { ClientCertificate, ResolvedMtls } from './options';

/** The DER bytes of whatever form a certificate was handed over in; undefined when there is none. */
function derOf(cert: ClientCertificate): Buffer | undefined {
  if (cert === undefined || cert === null) return undefined;
  if (Buffer.isBuffer(cert)) return cert.length === 0 ? undefined : cert;
  if (typeof cert === 'string') {
    if (cert.trim() === '') return undefined;
    try {
      return new X509Certificate(cert).raw;
    } catch {
      return undefined;
    }
  }
  if (cert instanceof X509Certificate) return cert.raw;
  // A TLS peer certificate: `{}` when the client sent none.
  const raw = (cert as { raw?: unknown }).raw;
  return Buffer.isBuffer(raw) && raw.length > 0 ? raw : undefined;
}

/** The client certificate of a request: from `mtls.getCertificate`, else from the TLS socket. */
function certificateOf(req: Request, mtls: ResolvedMtls): Buffer | undefined {
  if (mtls.getCertificate !== undefined) {
    let cert: ClientCertificate;
    try {
      cert = mtls.getCertificate(req);
    } catch (err) {
      throw new TokenAuthError('internal', { reason: 'getCertificate-threw', cause: err });
    }
    return derOf(cert);
  }
  const socket = req.socket as Partial<TLSSocket>;
  return typeof socket.getPeerCertificate === 'function' ? derOf(socket.getPeerCertificate(false)) : undefined;
}

/**
 * RFC 8705 §3: a token bound to a certificate (`cnf["x5t#S256"]`) passes only when the request's client
 * certificate has that SHA-256 thumbprint. No certificate, or another one → `invalid_token`.
 */
export function checkCertificateBinding(req: Request, expected: unknown, mtls: ResolvedMtls): void {
  if (typeof expected !== 'string') throw new TokenAuthError('invalid_token', { reason: 'mtls:cnf' });
  const der = certificateOf(req, mtls);
  if (der === undefined) throw new TokenAuthError('invalid_token', { reason: 'mtls:no-certificate' });
  const actual = createHash('sha256').update(der).digest();
  const wanted = Buffer.from(expected, 'base64url');
  if (wanted.length !== actual.length || !timingSafeEqual(wanted, actual)) {
    throw new TokenAuthError('invalid_token', { reason: 'mtls:thumbprint' });
  }
}
