// Types of the demo server module, for the TypeScript tests that start it.
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { TokenAuth } from '../lib';

/** The demo's dev issuer: mints Shape B tokens signed with a key made at start. */
export interface DevIssuer {
  mint(options?: {
    scopes?: string[];
    providers?: string[];
    origin?: string;
    lifetime?: number;
    forged?: boolean;
  }): string;
  /** Seconds a token lives. */
  readonly lifetime: number;
  /** The private signing key as PKCS#8 PEM. */
  privateKeyPem(): string;
  readonly options: { key: { publicKey: unknown }; issuer: string; audience: string; algorithms: string[] };
}

/** Build the demo app with a fresh dev signing key; `codeLifetimeMs` shortens authorization codes (tests). */
export function createDemoApp(options?: { codeLifetimeMs?: number }): {
  app: Express;
  auth: TokenAuth;
  issuer: DevIssuer;
};

/** Start the demo; `port: 0` picks a free port. */
export function startDemo(options?: { port?: number; host?: string; log?: (text: string) => void }): Promise<{
  url: string;
  port: number;
  token: string;
  /** The file holding the dev signing key while the demo runs (for `express-verified-user token --key`). */
  keyFile: string;
  server: Server;
  close(): Promise<void>;
}>;
