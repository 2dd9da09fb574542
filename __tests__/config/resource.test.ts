// The audience a `resource` sets (RFC 8707): scheme and host compared without regard to ASCII case, and nothing
// else loosened. Unicode case folding would let look-alike characters stand for ASCII letters.
import { resourceAudience } from '../../lib/config/resource';

const RESOURCE = 'https://kiosk.example.com/mcp';

describe('resourceAudience', () => {
  const rule = resourceAudience(RESOURCE);

  it.each([
    ['the resource itself', RESOURCE],
    ['scheme and host in upper case', 'HTTPS://KIOSK.EXAMPLE.COM/mcp'],
    ['the host in mixed case', 'https://Kiosk.Example.com/mcp'],
  ])('accepts %s', (_what, aud) => {
    expect(rule.has(aud)).toBe(true);
  });

  it.each([
    ['the Kelvin sign (U+212A) for k', 'https://\u212Aiosk.example.com/mcp'],
    ['the Kelvin sign for both k', 'https://\u212Aios\u212A.example.com/mcp'],
    ['a dotted capital I (U+0130) for i', 'https://k\u0130osk.example.com/mcp'],
    ['a fullwidth K (U+FF2B)', 'https://\uFF2Biosk.example.com/mcp'],
    ['the path in another case', 'https://kiosk.example.com/MCP'],
  ])('refuses %s', (_what, aud) => {
    expect(rule.has(aud)).toBe(false);
  });

  it('folds the configured resource by ASCII only, too', () => {
    expect(resourceAudience('https://\u212Aiosk.example.com/mcp').has(RESOURCE)).toBe(false);
  });
});
