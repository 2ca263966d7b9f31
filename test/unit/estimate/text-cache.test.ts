import { describe, expect, it } from '@jest/globals';
import { createTextCache } from '#src/estimate/text-cache.js';

describe('text cache of the estimator (T2)', () => {
  it('T2: holds at most its capacity, newest entries kept', () => {
    const cache = createTextCache(100);
    for (let i = 0; i < 1_000; i++) cache.set(`text ${i}`, i);
    let present = 0;
    for (let i = 0; i < 1_000; i++) if (cache.get(`text ${i}`) !== undefined) present++;
    expect(present).toBeLessThanOrEqual(100);
    for (let i = 950; i < 1_000; i++) expect(cache.get(`text ${i}`)).toBe(i);
    expect(cache.get('text 0')).toBeUndefined();
  });

  it('T2: an entry still read survives the change of generation', () => {
    const cache = createTextCache(10);
    cache.set('kept', 7);
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 4; i++) cache.set(`filler ${round} ${i}`, i);
      expect(cache.get('kept')).toBe(7);
    }
  });
});
