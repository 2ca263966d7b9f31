import { afterAll, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import type { Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';

/**
 * Summary calls avoided or required at 32k, 64k, 96k and 128k capacities, on one long
 * real session (mini-swe-agent, django__django-16560: 292 messages, ≈46.8k tokens o200k),
 * offline route, reserved output 4,000, no prefix, default clearing policy. Compaction
 * threshold = 75 % of (capacity − 4,000). Numbers measured when this test was written:
 *
 * | capacity | local trigger      | tokens before clearing | after clearing | threshold | summary calls |
 * |---------:|-------------------:|-----------------------:|---------------:|----------:|--------------:|
 * |   32,000 |             16,800 |                 46,782 |         38,657 |    21,000 | 1 (required)  |
 * |   64,000 |             36,000 |                 46,782 |         40,467 |    45,000 | 0 (clearing alone suffices) |
 * |   96,000 |             40,000 |                 46,782 |         40,500 |    69,000 | 0 (below threshold anyway)  |
 * |  128,000 |             40,000 |                 46,782 |         40,500 |    93,000 | 0 (below threshold anyway)  |
 *
 * 64k is the case that matters most: the raw history is over the threshold, clearing brings
 * it under, so no summary call is made.
 */

afterAll(freeEncoders);
const history: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]
  .messages;
const RESERVED = 4_000;

// The numbers above are VT Code's: clearing from the trigger (preset vtcode).
async function turnAt(capacity: number) {
  const session = createCompactorSession({
    history,
    limits: { capacity, reservedOutput: RESERVED },
    preset: 'vtcode',
  });
  const result = await session.runTurn();
  return { session, result };
}

describe('§13 summary calls avoided or required by capacity (django__django-16560, offline)', () => {
  it('H2/H3: 32k — threshold 21,000; clearing leaves ≈38.7k > 21,000, so one summary call compacts below the threshold', async () => {
    const { session, result } = await turnAt(32_000);
    expect(result.thresholdTokens).toBe(21_000);
    expect(result.tokens.afterClearing!).toBeGreaterThan(21_000);
    expect(result.decision).toBe('compacted');
    expect(result.summaryCalls).toBeGreaterThanOrEqual(1);
    expect(result.tokens.afterCompaction!).toBeLessThan(21_000);
    expect(session.history.length).toBeLessThan(history.length);
  });

  it('H2: 64k — threshold 45,000; raw ≈46.8k is over it but clearing leaves ≈40.5k < 45,000: zero summary calls', async () => {
    const { session, result } = await turnAt(64_000);
    expect(result.thresholdTokens).toBe(45_000);
    expect(result.tokens.beforeClearing!).toBeGreaterThan(45_000);
    expect(result.tokens.afterClearing!).toBeLessThan(45_000);
    expect(result.decision).toBe('below-threshold');
    expect(result.summaryCalls).toBe(0);
    expect(session.history).toHaveLength(history.length);
  });

  it.each([
    [96_000, 69_000],
    [128_000, 93_000],
  ])('H2: %i — threshold %i; clearing leaves ≈40.5k: zero summary calls', async (capacity, threshold) => {
    const { result } = await turnAt(capacity);
    expect(result.thresholdTokens).toBe(threshold);
    expect(result.tokens.afterClearing!).toBeLessThan(threshold);
    expect(result.decision).toBe('below-threshold');
    expect(result.summaryCalls).toBe(0);
  });

  it('H2 (control): with clearing disabled, 64k needs a summary call — clearing is what avoided it', async () => {
    const session = createCompactorSession({
      history,
      limits: { capacity: 64_000, reservedOutput: RESERVED },
      policy: { preset: 'vtcode', enabled: false },
    });
    const result = await session.runTurn();
    expect(result.tokens.afterClearing).toBe(result.tokens.beforeClearing);
    expect(result.summaryCalls).toBeGreaterThanOrEqual(1);
    expect(result.decision).toBe('compacted');
  });
});
