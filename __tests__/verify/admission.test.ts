import { Sightings } from '../../lib/verify/admission';
import { NOW, shapeB, sign } from '../fixtures/issuer';

const tokens = (n: number) => Array.from({ length: n }, () => sign(shapeB(NOW)));

describe('Sightings (the cache admission rule)', () => {
  it("calls a token's first sighting new and its second seen", () => {
    const sightings = new Sightings(100);
    const [token] = tokens(1);
    expect(sightings.sight(token)).toBe(false);
    expect(sightings.sight(token)).toBe(true);
  });

  it('tells distinct tokens apart', () => {
    const sightings = new Sightings(1000);
    const many = tokens(200);
    const seenAtFirst = many.filter((t) => sightings.sight(t)).length;
    expect(seenAtFirst).toBe(0);
    expect(many.filter((t) => sightings.sight(t)).length).toBeGreaterThanOrEqual(195);
  });

  it('forgets a token after more than two horizons of other new tokens: it would have left the cache anyway', () => {
    const sightings = new Sightings(50);
    const [token, ...others] = tokens(121);
    sightings.sight(token);
    for (const other of others) sightings.sight(other);
    expect(sightings.sight(token)).toBe(false);
  });

  it('never forgets a token sighted at least once per horizon', () => {
    const sightings = new Sightings(50);
    const [hot, ...others] = tokens(301);
    sightings.sight(hot);
    others.forEach((other, i) => {
      sightings.sight(other);
      if (i % 40 === 0) expect(sightings.sight(hot)).toBe(true);
    });
  });
});
