#!/usr/bin/env node
// The `express-verified-user` command (package.json "bin"): `token` mints a development token, `key` makes a
// development key pair, `check` probes a deployed protected resource. Flags are parsed here; cli/ does the work.
// Exit codes: 0 done, 2 bad input, 1 other (for `check`: a FAIL).
import { fchmodSync, fstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseDuration } from './base/duration';
import { formatLine, runCheck } from './cli/check';
import { newKeyPair, publicKeyOf, writeKeyFile } from './cli/keys';
import { mintToken } from './cli/token';
import { CHECK_HELP, HELP, KEY_HELP, TOKEN_HELP, UsageError } from './cli/usage';

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

const TOKEN_OPTIONS = {
  secret: { type: 'string' },
  key: { type: 'string' },
  iss: { type: 'string' },
  aud: { type: 'string' },
  sub: { type: 'string' },
  scope: { type: 'string', multiple: true },
  exp: { type: 'string' },
  claims: { type: 'string' },
  claim: { type: 'string', multiple: true },
  alg: { type: 'string' },
  kid: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const KEY_OPTIONS = {
  alg: { type: 'string' },
  public: { type: 'string' },
  jwks: { type: 'boolean' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const CHECK_OPTIONS = {
  token: { type: 'string' },
  timeout: { type: 'string' },
  'allow-private': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Longest `check --timeout`. */
const LONGEST_CHECK_SECONDS = 300;

/** What a run prints: text for stdout, or for stderr with an exit code. */
interface Outcome {
  stdout?: string;
  stderr?: string;
  code: number;
  /** stdout holds a private key or secret: a file it is redirected to is made readable by its owner only. */
  secret?: boolean;
}

function parse<T extends ParseArgsOptionsConfig>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (err) {
    // Node's message quotes a stray argument, which may be the second word of a secret: never echo it.
    const message = (err as Error).message;
    throw new UsageError(
      /^Unexpected argument/.test(message)
        ? 'unexpected argument (a value with spaces needs quotes); see --help'
        : message,
    );
  }
}

function version(): string {
  // dist/cli.js and lib/cli.ts both sit one level below the package root.
  return (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/** `key`: a new key pair or secret, or the public key of one, on stdout or in a new file (`--out`). */
function key(args: string[]): Outcome {
  // "--public --jwks <file>" reads as --public taking "--jwks" as its file: take the flags in either order.
  const at = args.indexOf('--public');
  const ordered =
    at >= 0 && args[at + 1] === '--jwks' ? [...args.slice(0, at), '--jwks', '--public', ...args.slice(at + 2)] : args;
  const { values } = parse(ordered, KEY_OPTIONS);
  if (values.help === true) return { stdout: KEY_HELP, code: 0 };
  if (values.jwks === true && values.public === undefined)
    throw new UsageError('--jwks goes with --public <file> (the JWKS of a key you saved)');
  const secret = values.public === undefined;
  const text =
    values.public === undefined
      ? newKeyPair(values.alg ?? 'ES256')
      : publicKeyOf(values.public, values.jwks === true, values.alg);
  if (values.out === undefined) return { stdout: text, code: 0, secret };
  writeKeyFile(values.out, text, secret);
  return { stderr: `wrote ${values.out} (mode ${secret ? '0600' : '0644'})\n`, code: 0 };
}

/** `check <url>`: each line written as it is decided; exit code 1 when one is a FAIL. */
async function check(args: string[], write: (text: string) => void): Promise<Outcome> {
  const { values, positionals } = parse(args, CHECK_OPTIONS, true);
  if (values.help === true) return { stdout: CHECK_HELP, code: 0 };
  if (positionals.length !== 1) throw new UsageError('check takes one URL, the protected resource to probe');
  let totalMs: number | undefined;
  if (values.timeout !== undefined) {
    let seconds: number;
    try {
      seconds = parseDuration(values.timeout, '--timeout');
    } catch {
      throw new UsageError('--timeout must be a duration with a unit, such as 10s or 1m');
    }
    if (seconds <= 0 || seconds > LONGEST_CHECK_SECONDS)
      throw new UsageError(`--timeout must be longer than 0 and at most ${LONGEST_CHECK_SECONDS}s`);
    totalMs = seconds * 1000;
  }
  const [url] = positionals;
  const allowPrivate = values['allow-private'] === true;
  const lines = await runCheck({ url, token: values.token, totalMs, allowPrivate }, (line) => write(formatLine(line)));
  const count = (status: string) => lines.filter((line) => line.status === status).length;
  write(`\n${count('PASS')} passed, ${count('WARN')} warned, ${count('FAIL')} failed\n`);
  return { code: count('FAIL') > 0 ? 1 : 0 };
}

async function dispatch(argv: string[], env: NodeJS.ProcessEnv, write: (text: string) => void): Promise<Outcome> {
  const [command, ...rest] = argv;
  if (command === undefined) return { stderr: HELP, code: 2 };
  if (command === '-h' || command === '--help') return { stdout: HELP, code: 0 };
  if (command === '-v' || command === '--version') return { stdout: `${version()}\n`, code: 0 };
  if (command === 'help') {
    const topic = { token: TOKEN_HELP, key: KEY_HELP, check: CHECK_HELP }[rest[0] ?? ''];
    return { stdout: topic ?? HELP, code: 0 };
  }
  if (command === 'token') {
    const { values } = parse(rest, TOKEN_OPTIONS);
    if (values.help === true) return { stdout: TOKEN_HELP, code: 0 };
    return { stdout: `${mintToken(values, env)}\n`, code: 0 };
  }
  if (command === 'key') return key(rest);
  if (command === 'check') return check(rest, write);
  throw new UsageError(`unknown command ${JSON.stringify(command)}: use token, key, check or help`);
}

/**
 * Run the command line on `argv` (without node and the script); never exits the process itself. `check` writes
 * its lines through `write` as they come (without one, they are gathered into the outcome's stdout).
 */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  write?: (text: string) => void,
): Promise<Outcome> {
  let gathered = '';
  try {
    const outcome = await dispatch(argv, env, write ?? ((text) => (gathered += text)));
    return gathered === '' ? outcome : { ...outcome, stdout: `${gathered}${outcome.stdout ?? ''}` };
  } catch (err) {
    if (err instanceof UsageError) {
      return {
        stderr: `express-verified-user: ${err.message}\nRun "express-verified-user --help" for usage.\n`,
        code: 2,
      };
    }
    return { stderr: `express-verified-user: ${err instanceof Error ? err.message : String(err)}\n`, code: 1 };
  }
}

/** A private key or secret about to go to stdout: when stdout is a file (`key > dev-key.pem`), make it 0600. */
function restrictRedirect(): void {
  try {
    if (fstatSync(1).isFile()) fchmodSync(1, 0o600);
  } catch {
    process.stderr.write('express-verified-user: could not make the output file private (chmod 600 it)\n');
  }
}

if (require.main === module) {
  void runCli(process.argv.slice(2), process.env, (text) => process.stdout.write(text)).then((outcome) => {
    if (outcome.secret === true) restrictRedirect();
    if (outcome.stdout !== undefined) process.stdout.write(outcome.stdout);
    if (outcome.stderr !== undefined) process.stderr.write(outcome.stderr);
    process.exitCode = outcome.code;
  });
}
