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

Development tokens and keys for an app that verifies tokens with express-verified-user, and a check of a
deployed protected resource (an MCP server) as an MCP client sees it.

Commands:
  token    print a signed access token (for curl against a local app)
  key      make a new development key pair (--out <file>, written 0600), or print the public key of one
  check    probe a deployed protected resource: its 401 challenge, metadata and authorization servers
  help     print this help, or a command's: express-verified-user help check

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
                      which is the kid "key --public <file> --jwks" publishes; none for a secret)

Scopes go where the mode reads them: "scopes" (an array) in strict mode, "scope" (space-separated) in
jwt and at+jwt mode, or the first claim of TOKEN_SCOPE_CLAIM.
`;

/** `express-verified-user key --help`. */
export const KEY_HELP = `Usage: express-verified-user key [--alg <alg>] [--out <file>] | key --public <file> [--jwks]

Make a development key pair: the private key (PKCS#8 PEM), then its public key (SPKI PEM), in one file
that "token --key <file>" reads. --out writes it readable by you only (mode 0600) and never overwrites a
file; without --out it goes to stdout, and a file stdout is redirected to is made 0600 as well.

  npx express-verified-user key --out dev-key.pem
  export TOKEN_PUBLIC_KEY="$(npx express-verified-user key --public dev-key.pem)"
  npx express-verified-user token --key dev-key.pem --iss https://dev.local --aud my-api --scope read

Options:
  --alg <alg>       ES256 (default), ES384, ES512, RS256 (RSA 2048; also RS384/512, PS256/384/512),
                    EdDSA (Ed25519); HS256 makes a random 48-byte secret for TOKEN_SECRET instead
  --out <file>      write to <file>, created with mode 0600 (a private key or secret) or 0644 (--public);
                    an existing file is refused, never overwritten
  --public <file>   print the public key of the private key in <file> (PEM or JWK) instead
  --jwks            with --public: print it as a JWKS ({"keys":[…]}, with kid, alg and use), to serve
                    at the address your app's key.jwksUri names (before or after --public <file>)

Keep dev keys out of production: anyone with the private key can mint tokens your app accepts.
`;

/** `express-verified-user check --help`. */
export const CHECK_HELP = `Usage: express-verified-user check <url> [--token <token>] [--timeout <duration>] [--allow-private]

Probe a deployed protected resource (an MCP server's endpoint, such as https://mcp.example.com/mcp) as an
MCP client would, without credentials, and print one line per duty with the RFC or MCP section it comes from:
  the 401 to a request without a token, its WWW-Authenticate challenge (Bearer, no error code,
  resource_metadata, scope); the protected resource metadata it names and its path and root forms
  (resource identical to <url>, authorization_servers); each authorization server's metadata (RFC 8414 or
  OpenID Connect discovery, the same issuer, its endpoints, PKCE S256, dynamic registration or client ID
  metadata documents, the iss response parameter).

  npx express-verified-user check https://mcp.example.com/mcp
  npx express-verified-user check https://mcp.example.com/mcp --token "$OTHER_AUDIENCE_TOKEN"

Options:
  --token <token>       also send a token the server must refuse, one issued for another audience
                        (RFC 8707): it must answer 401. The token is sent once and never printed
  --timeout <duration>  longest run (default 30s); each request waits at most 5s
  --allow-private       also follow hosts the server names that resolve to a private address
                        (10/8, 172.16/12, 192.168/16, fc00::/7): for a deployment inside your own network

Lines: PASS (a duty met), WARN (a SHOULD not met), FAIL (a duty not met, followed by "fix:" and what
meets it). At most 17 requests, no redirect followed, documents read up to 64 KiB, at most 4
authorization servers checked.

Where check connects: <url> itself, whatever it resolves to. Any other host the server names is resolved
once and the connection pinned to that address (TLS still checks the certificate for the name); it is not
followed when an address is loopback, unspecified, link-local (169.254.169.254 among them) or one of this
machine's own, unless <url> itself names this machine (localhost, 127.0.0.1, [::1] or one of its
addresses), nor when it is private, unless --allow-private.

Exit codes: 0 no FAIL, 1 a FAIL, 2 bad input.
`;
