/**
 * The demo as `npm run demo` runs it (node demo-app/server.js, a process of its own on 127.0.0.1): stopped by Ctrl-C
 * (SIGINT) or by a stop request (SIGTERM: kill, docker stop, systemd), it removes its dev key file on the way out.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Start the demo; resolves with its key file once the banner names it, and a way to stop it with a signal. */
function startDemoProcess(): Promise<{ keyFile: string; stop: (signal: NodeJS.Signals) => Promise<number | null> }> {
  const child = spawn(
    process.execPath,
    ['-r', join(ROOT, '__tests__', 'fixtures', 'package-from-source.js'), join(ROOT, 'demo-app', 'server.js')],
    { env: { ...process.env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the demo printed no key file within 30 s: ${err}`));
    }, 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /--key '([^']+)'/.exec(out);
      if (found === null) return;
      clearTimeout(timer);
      resolve({
        keyFile: found[1],
        stop: (signal) => {
          child.kill(signal);
          const stopped = setTimeout(() => child.kill('SIGKILL'), 10_000);
          return exited.finally(() => clearTimeout(stopped));
        },
      });
    });
    exited.then(() => reject(new Error(`the demo ended before it started: ${err}`)), reject);
  });
}

describe('npm run demo, stopped by a signal', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)(
    '%s: the demo exits (%d) and its dev key file is gone',
    async (signal, status) => {
      const demo = await startDemoProcess();
      expect(existsSync(demo.keyFile)).toBe(true);
      expect(await demo.stop(signal)).toBe(status);
      expect(existsSync(demo.keyFile)).toBe(false);
      expect(existsSync(dirname(demo.keyFile))).toBe(false);
    },
    60_000,
  );
});
