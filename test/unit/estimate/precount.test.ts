import { afterAll, describe, expect, it } from '@jest/globals';
import { get_encoding } from 'tiktoken';
import { boundedCounter } from '#src/estimate/bounded-encode.js';
import { freeEncoders, precount, tiktokenCounter } from '#src/estimate/counters.js';
import { piecePattern } from '#src/estimate/pieces.js';

// An encoder of the test's own, so the counts compared with are not the shared counter's.
const own = get_encoding('o200k_base');
const countedAlone = boundedCounter(own, piecePattern('o200k_base'));
afterAll(() => {
  freeEncoders();
  own.free();
});

/** Distinct texts long enough to be counted ahead. */
const texts = Array.from(
  { length: 40 },
  (_, i) => `Section ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(20 + i)}`,
);

describe('counting ahead of a synchronous pass (T1)', () => {
  it('T1: lets other work run between its slices, and the counter answers the same counts', async () => {
    const fresh = texts.map(countedAlone);
    let ranBetween = false;
    setImmediate(() => (ranBetween = true));
    // A slice of 0 ms: other work gets in after every text.
    const pending = precount('o200k_base', texts, 0);
    expect(ranBetween).toBe(false);
    const release = await pending;
    expect(ranBetween).toBe(true);
    expect(texts.map((t) => tiktokenCounter('o200k_base').count(t))).toEqual(fresh);
    release();
    expect(texts.map((t) => tiktokenCounter('o200k_base').count(t))).toEqual(fresh);
  });

  it('T1: does not let other work in once the last text is counted', async () => {
    const [last] = texts.slice(-1).map((t) => `${t} once more`);
    let ranBetween = false;
    // A slice of 0 ms yields before every text to count: one text that is already known costs no wait.
    const first = await precount('o200k_base', [last!], 0);
    setImmediate(() => (ranBetween = true));
    const release = await precount('o200k_base', [last!], 0);
    expect(ranBetween).toBe(false);
    release();
    first();
  });

  it('T1: a long text counted before, whole, is not counted again, so others wait for nothing', async () => {
    const seen = `${texts[0]!} seen before`;
    expect(seen.length).toBeGreaterThanOrEqual(512);
    expect(tiktokenCounter('o200k_base').count(seen)).toBe(countedAlone(seen));
    let ranBetween = false;
    setImmediate(() => (ranBetween = true));
    // A slice of 0 ms yields before every text that still has to be counted.
    const release = await precount('o200k_base', [seen], 0);
    expect(ranBetween).toBe(false);
    expect(tiktokenCounter('o200k_base').count(seen)).toBe(countedAlone(seen));
    release();
  });

  it('T1: one counter per encoding serves every caller', () => {
    expect(tiktokenCounter('o200k_base')).toBe(tiktokenCounter('o200k_base'));
    expect(tiktokenCounter('cl100k_base')).not.toBe(tiktokenCounter('o200k_base'));
  });
});
