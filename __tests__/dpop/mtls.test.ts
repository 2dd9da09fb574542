import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { TokenAuthOptions } from '../../lib';
import { createTestIssuer, type TestIssuer } from '../../lib/testing';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';

// RFC 8705 §3 through a real HTTPS server on 127.0.0.1 that asks for client certificates; the certificates are
// made here by the openssl CLI.
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const describeWithOpenssl = hasOpenssl ? describe : describe.skip;

interface Pair {
  key: Buffer;
  cert: Buffer;
  pem: string;
  thumbprint: string;
}

const INVALID = { status: 'error', message: 'Invalid access token' };

describeWithOpenssl('certificate-bound tokens (mTLS)', () => {
  let dir: string;
  let server: Pair;
  let alice: Pair;
  let mallory: Pair;
  let issuer: TestIssuer;

  function makePair(name: string, cn: string, san?: string): Pair {
    const keyFile = join(dir, `${name}.key`);
    const certFile = join(dir, `${name}.pem`);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${cn}`,
        ...(san === undefined ? [] : ['-addext', `subjectAltName=${san}`]),
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore', timeout: 10_000 },
    );
    const pem = readFileSync(certFile, 'utf8');
    const thumbprint = createHash('sha256').update(new X509Certificate(pem).raw).digest('base64url');
    return { key: readFileSync(keyFile), cert: Buffer.from(pem), pem, thumbprint };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evu-mtls-'));
    server = makePair('server', '127.0.0.1', 'IP:127.0.0.1');
    alice = makePair('alice', 'alice');
    mallory = makePair('mallory', 'mallory');
    issuer = await createTestIssuer({ alg: 'ES256' });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe.each(EXPRESS_VERSIONS)('through %s', (_name, express) => {
    let https: Server;
    let origin: string;

    const jtiApp = (options: Partial<TokenAuthOptions> = {}) =>
      appWith(express, { ...issuer.options, ...options }, { answer: (claims) => ({ jti: claims?.jti }) });

    beforeAll(async () => {
      https = createServer(
        { key: server.key, cert: server.cert, requestCert: true, rejectUnauthorized: false },
        jtiApp(),
      );
      await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
      origin = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      https.closeAllConnections();
      await new Promise((resolve) => https.close(resolve));
    });

    function get(
      token: string,
      client?: Pair,
    ): Promise<{ status: number; body: unknown; challenge: string | undefined }> {
      return new Promise((resolve, reject) => {
        const req = httpsRequest(
          `${origin}/me`,
          {
            ca: server.cert,
            key: client?.key,
            cert: client?.cert,
            agent: false,
            timeout: 10_000,
            headers: { Authorization: `Bearer ${token}` },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                body: JSON.parse(text),
                challenge: res.headers['www-authenticate'],
              }),
            );
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        req.end();
      });
    }

    it('accepts a token bound to the client certificate the TLS connection presented', async () => {
      const res = await get(issuer.sign({ cnf: { 'x5t#S256': alice.thumbprint } }), alice);
      expect(res.status).toBe(200);
    });

    it('answers 401 invalid_token for another certificate', async () => {
      const res = await get(issuer.sign({ cnf: { 'x5t#S256': alice.thumbprint } }), mallory);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID);
      expect(res.challenge).toBe('Bearer realm="api", error="invalid_token", error_description="Invalid access token"');
    });

    it('answers 401 invalid_token when no certificate was presented', async () => {
      const res = await get(issuer.sign({ cnf: { 'x5t#S256': alice.thumbprint } }));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID);
    });

    it('still accepts an unbound token without a certificate', async () => {
      expect((await get(issuer.sign())).status).toBe(200);
    });

    it('reads the certificate from mtls.getCertificate behind a TLS-terminating proxy', async () => {
      const app = jtiApp({ mtls: { getCertificate: (req) => decodeURIComponent(req.get('X-Client-Cert') ?? '') } });
      const token = issuer.sign({ cnf: { 'x5t#S256': alice.thumbprint } });
      await request(app)
        .get('/me')
        .set({ Authorization: `Bearer ${token}`, 'X-Client-Cert': encodeURIComponent(alice.pem) })
        .expect(200);
      const other = await request(app)
        .get('/me')
        .set({ Authorization: `Bearer ${token}`, 'X-Client-Cert': encodeURIComponent(mallory.pem) });
      expect(other.status).toBe(401);
      expect(other.body).toEqual(INVALID);
      const none = await request(app)
        .get('/me')
        .set({ Authorization: `Bearer ${token}` });
      expect(none.status).toBe(401);
    });
  });
});
