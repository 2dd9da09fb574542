// Types of the demo server module, for the TypeScript tests that start it.
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { TokenAuth } from '../lib';

/** The demo's dev issuer: mints Shape B tokens signed with a key made at start. */
export interface DevIssuer {
  mint(options?: { scopes?: string[]; providers?: string[]; origin?: string }): string;
  readonly options: { key: { publicKey: unknown }; issuer: string; audience: string; algorithms: string[] };
}

/** Build the demo app with a fresh dev signing key. */
export function createDemoApp(): { app: Express; auth: TokenAuth; issuer: DevIssuer };

/** Start the demo; `port: 0` picks a free port. */
export function startDemo(options?: { port?: number; host?: string; log?: (text: string) => void }): Promise<{
  url: string;
  port: number;
  token: string;
  server: Server;
  close(): Promise<void>;
}>;
