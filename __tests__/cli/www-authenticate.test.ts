// Reading WWW-Authenticate challenges (RFC 9110 §11.6.1) as `check` does: schemes, auth-params, quoting, several
// challenges in one field, and what does not parse left out.
import { parseChallenges } from '../../lib/cli/www-authenticate';

const view = (field: string) =>
  parseChallenges(field).map(({ scheme, params }) => ({ scheme, params: Object.fromEntries(params) }));

describe('parseChallenges', () => {
  it('reads a Bearer challenge with quoted and token values, names lower-cased, values as sent', () => {
    expect(
      view(
        'Bearer realm="api", Scope="mcp:tools mcp:admin", resource_metadata="https://x/.well-known/a,b", error=invalid_token',
      ),
    ).toEqual([
      {
        scheme: 'bearer',
        params: {
          realm: 'api',
          scope: 'mcp:tools mcp:admin',
          resource_metadata: 'https://x/.well-known/a,b',
          error: 'invalid_token',
        },
      },
    ]);
  });

  it('reads several challenges in one field, and a scheme alone or with a token68', () => {
    expect(view('Basic realm="x", DPoP algs="ES256 RS256", Negotiate abc123==, Bearer')).toEqual([
      { scheme: 'basic', params: { realm: 'x' } },
      { scheme: 'dpop', params: { algs: 'ES256 RS256' } },
      { scheme: 'negotiate', params: {} },
      { scheme: 'bearer', params: {} },
    ]);
  });

  it('unescapes quoted-pairs, allows spaces around "=", and keeps the first of a repeated name', () => {
    expect(view('Bearer a = "x\\"y\\\\z" , a="second", b =tok')).toEqual([
      { scheme: 'bearer', params: { a: 'x"y\\z', b: 'tok' } },
    ]);
  });

  it('leaves out what does not parse: an unterminated quote, a parameter before any scheme, a bad scheme', () => {
    expect(view('realm="x", Bearer scope="a, Basic')).toEqual([{ scheme: 'bearer', params: {} }]);
    expect(view('"quoted", =x, Bearer, scope="s"')).toEqual([{ scheme: 'bearer', params: { scope: 's' } }]);
    expect(view('')).toEqual([]);
    expect(view(',,, ,')).toEqual([]);
  });
});
