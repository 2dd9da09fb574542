#!/usr/bin/env node
// The `express-verified-user` command (package.json "bin"): `token` mints a development token, `key` makes a
// development key pair. Flags are parsed here; cli/ does the work. Exit codes: 0 done, 2 bad input, 1 other.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { newKeyPair, publicKeyOf } from './cli/keys';
import { mintToken } from './cli/token';
import { HELP, KEY_HELP, TOKEN_HELP, UsageError } from './cli/usage';

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
  help: { type: 'boolean', short: 'h' },
} as const;

/** What a run prints: text for stdout, or for stderr with an exit code. */
interface Outcome {
  stdout?: string;
  stderr?: string;
  code: number;
}

function parse<T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
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

function dispatch(argv: string[], env: NodeJS.ProcessEnv): Outcome {
  const [command, ...rest] = argv;
  if (command === undefined) return { stderr: HELP, code: 2 };
  if (command === '-h' || command === '--help') return { stdout: HELP, code: 0 };
  if (command === '-v' || command === '--version') return { stdout: `${version()}\n`, code: 0 };
  if (command === 'help') {
    const topic = { token: TOKEN_HELP, key: KEY_HELP }[rest[0] ?? ''];
    return { stdout: topic ?? HELP, code: 0 };
  }
  if (command === 'token') {
    const { values } = parse(rest, TOKEN_OPTIONS);
    if (values.help === true) return { stdout: TOKEN_HELP, code: 0 };
    return { stdout: `${mintToken(values, env)}\n`, code: 0 };
  }
  if (command === 'key') {
    const { values } = parse(rest, KEY_OPTIONS);
    if (values.help === true) return { stdout: KEY_HELP, code: 0 };
    if (values.public !== undefined)
      return { stdout: publicKeyOf(values.public, values.jwks === true, values.alg), code: 0 };
    if (values.jwks === true) throw new UsageError('--jwks goes with --public <file> (the JWKS of a key you saved)');
    return { stdout: newKeyPair(values.alg ?? 'ES256'), code: 0 };
  }
  throw new UsageError(`unknown command ${JSON.stringify(command)}: use token, key or help`);
}

/** Run the command line on `argv` (without node and the script); never exits the process itself. */
export function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Outcome {
  try {
    return dispatch(argv, env);
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

if (require.main === module) {
  const outcome = runCli(process.argv.slice(2));
  if (outcome.stdout !== undefined) process.stdout.write(outcome.stdout);
  if (outcome.stderr !== undefined) process.stderr.write(outcome.stderr);
  process.exitCode = outcome.code;
}
