// The command line's words: its help texts, and the error that means "you asked wrongly" (exit code 2).

/** Bad input on the command line (an unknown flag, an unreadable key file, a wrong duration): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `express-verified-user --help`. */
export const HELP = `Usage: express-verified-user <command> [options]

Development tokens and keys for an app that verifies tokens with express-verified-user.

Commands:
  token    print a signed access token (for curl against a local app)
  key      print a new development key pair, or the public key of one
  help     print this help, or a command's: express-verified-user help token

Options:
  -h, --help     help
  -v, --version  the package version

Exit codes: 0 done, 2 bad input (the message says what), 1 anything else.
`;

/** `express-verified-user token --help`. */
export const TOKEN_HELP = `Usage: express-verified-user token [options]

Print a signed access token on stdout, for the key given by a flag or by TOKEN_SECRET:
  TOKEN=$(npx express-verified-user token --scope identify,email --sub user-1)

The signing key (one of):
  --secret <secret>   an HMAC secret, at least 32 bytes (HS256); a flag shows in your shell history,
                      so prefer TOKEN_SECRET in the environment
  --key <file>        a private key: PEM (PKCS#8, PKCS#1 or SEC1, such as "express-verified-user key"
                      writes) or a private JWK (JSON with "d"; a JWKS holding one private key also works)
  (neither)           TOKEN_SECRET from the environment

Claims (defaults come from the variables your app reads, so the token fits it):
  --iss <issuer>      iss (default: TOKEN_ISSUER's first entry, or TOKEN_ISSUER_BASE_URL's)
  --aud <audience>    aud (default: TOKEN_AUDIENCE's first entry)
  --sub <subject>     sub (default: null in strict mode, "dev-user" in at+jwt mode, absent in jwt mode)
  --scope <scopes>    granted scopes, separated by commas or spaces; repeatable (default: none)
  --exp <duration>    lifetime, such as 90s, 10m, 2h, 7d (default: 10m)
  --claims <mode>     strict (Shape B, the identity service's payload), jwt or at+jwt (RFC 9068)
                      (default: TOKEN_CLAIMS; else jwt with TOKEN_ISSUER_BASE_URL; else strict)
  --claim <name=value>  any other claim; the value is read as JSON when it parses (42, true, ["a"]),
                      else taken as a string; repeatable; replaces a claim set above

Header:
  --alg <alg>         HS256/384/512, RS*, PS*, ES256/384/512, EdDSA (default: the key's: HS256 for a
                      secret, RS256 for RSA, the ES* of an EC key's curve, EdDSA for Ed25519)
  --kid <id>          kid (default: the JWK's kid, else the RFC 7638 thumbprint of the public key,
                      which is the kid "key --public --jwks" publishes; none for a secret)

Scopes go where the mode reads them: "scopes" (an array) in strict mode, "scope" (space-separated) in
jwt and at+jwt mode, or the first claim of TOKEN_SCOPE_CLAIM.
`;

/** `express-verified-user key --help`. */
export const KEY_HELP = `Usage: express-verified-user key [--alg <alg>] | key --public <file> [--jwks]

Make a development key pair and print it on stdout: the private key (PKCS#8 PEM), then its public key
(SPKI PEM). Save both in one file; "token --key <file>" reads the private key from it.

  npx express-verified-user key > dev-key.pem
  export TOKEN_PUBLIC_KEY="$(npx express-verified-user key --public dev-key.pem)"
  npx express-verified-user token --key dev-key.pem --iss https://dev.local --aud my-api --scope read

Options:
  --alg <alg>       ES256 (default), ES384, ES512, RS256 (RSA 2048; also RS384/512, PS256/384/512),
                    EdDSA (Ed25519); HS256 prints a random 48-byte secret for TOKEN_SECRET instead
  --public <file>   print the public key of the private key in <file> (PEM or JWK) instead
  --jwks            with --public: print it as a JWKS ({"keys":[…]}, with kid, alg and use), to serve
                    at the address your app's key.jwksUri names

Keep dev keys out of production: anyone with the private key can mint tokens your app accepts.
`;
