import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import { msg, type Message } from '#src/messages/message.js';
import {
  cacheAwareThreshold,
  clearInSteps,
  completeClearingPolicy,
  completeCompactionWait,
  normalizeHistory,
  sharedPrefixLength,
} from '#src/projection/index.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { clearOldToolResultsWithRecentBatches } from '#support/projection/vtcode-preset.js';
import { batch, charsEstimator, deepFreeze, isStub } from '#support/projection/helpers.js';
import { historyArb } from '#support/projection/history-arb.js';

const est = charsEstimator();
const clearedIds = (out: readonly Message[]) => out.filter(isStub).map((m) => m.toolCallId);

/** A history of `n` single-call batches of 4,000 chars (~1,000 tokens each with the chars estimator). */
function history(n: number): Message[] {
  const out: Message[] = [msg.user('investigate')];
  for (let i = 0; i < n; i++) out.push(...batch([`r${i}`], 4_000));
  return deepFreeze(out);
}
const clear = (h: readonly Message[], clearAtLeast: number) =>
  clearOldToolResultsWithRecentBatches(h, {
    estimator: est,
    policy: { keepToolUses: 1, keepRecentToolBatches: 0, clearAtLeast },
    localTrigger: 1,
    evidenceBudget: 0,
  });

describe('cache-aware clearing', () => {
  it('C1: clearAtLeast defaults to 0; compaction waits for a cache break by default (preset compactor), not in preset vtcode', () => {
    expect(completeClearingPolicy({})).toMatchObject({
      preset: 'compactor',
      enabled: false,
      clearAtLeast: 0,
    });
    expect(completeCompactionWait({}, 'compactor').waitsForCacheBreak).toBe(true);
    expect(completeClearingPolicy({ preset: 'vtcode' })).toMatchObject({
      preset: 'vtcode',
      enabled: true,
      clearAtLeast: 0,
    });
    expect(completeCompactionWait({}, 'vtcode').waitsForCacheBreak).toBe(false);
    expect(completeCompactionWait({ waitsForCacheBreak: true }, 'vtcode').waitsForCacheBreak).toBe(true);
    expect(completeClearingPolicy({ clearAtLeast: 2_500.7 }).clearAtLeast).toBe(2_500);
  });
  it('C1: clearInSteps clears the candidates whose running savings fit under the last whole step', () => {
    expect(clearInSteps([1, 3, 5, 7], [400, 400, 400, 400], 0)).toEqual([1, 3, 5, 7]);
    expect(clearInSteps([1, 3, 5, 7], [400, 400, 400, 400], 1_000)).toEqual([1, 3]);
    expect(clearInSteps([1, 3, 5, 7], [400, 400, 400, 400], 2_000)).toEqual([]);
  });
  it('C1: with clearAtLeast the cleared set only grows in steps, and stays the same between steps', () => {
    const step = 3_000; // about three results' worth of savings
    const seen: string[][] = [];
    for (let n = 2; n <= 12; n++) seen.push(clearedIds(clear(history(n), step).messages) as string[]);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i].slice(0, seen[i - 1].length)).toEqual(seen[i - 1]); // never un-cleared
      const added = seen[i].length - seen[i - 1].length;
      expect(added === 0 || added >= 3).toBe(true); // each step frees about `step` tokens
    }
    expect(new Set(seen.map((s) => s.length)).size).toBeLessThan(seen.length); // some turns change nothing
    // Without batching, every new result moves the cut by one.
    expect(clearedIds(clear(history(6), 0).messages)).toHaveLength(5);
    expect(clearedIds(clear(history(7), 0).messages)).toHaveLength(6);
  });
  it('C1: between steps the projected request extends the previous one unchanged (its prefix stays cached)', () => {
    const a = clear(history(8), 3_000).messages;
    const b = clear(history(9), 3_000).messages;
    expect(clearedIds(b)).toEqual(clearedIds(a));
    expect(sharedPrefixLength(a, b)).toBe(a.length);
    const c = clear(history(9), 0).messages; // without batching the cut moved: the prefix breaks
    expect(sharedPrefixLength(clear(history(8), 0).messages, c)).toBeLessThan(a.length);
    expect(sharedPrefixLength(null, b)).toBe(0);
    expect(sharedPrefixLength([msg.user('x')], [msg.user('y')])).toBe(0);
    expect(sharedPrefixLength([msg.user('x')], [msg.user('x'), msg.user('y')])).toBe(1);
  });
  it('H5: compaction waits 85 % of the way to the prompt budget, at most 7,000 tokens, only while the cached prefix is intact', () => {
    // 32k window: threshold 18,000, prompt budget 24,000 → 18,000 + 5,100.
    expect(cacheAwareThreshold(18_000, 24_000, true)).toBe(23_100);
    expect(cacheAwareThreshold(18_000, 24_000, true, { ratio: 0.99, maxTokens: 7_000 })).toBe(23_940);
    expect(cacheAwareThreshold(10_000, 24_000, true, { ratio: 0.99, maxTokens: 7_000 })).toBe(17_000);
  });

  it('H5: in a prompt budget over 24,000 tokens the cap shrinks in proportion (64k: 3,000; 128k: 1,400); referenceBudget Infinity keeps it flat', () => {
    // 64k: 42,000 + 7,000 × 24,000 / 56,000; 128k: 90,000 + 7,000 × 24,000 / 120,000.
    expect(cacheAwareThreshold(42_000, 56_000, true)).toBe(45_000);
    expect(cacheAwareThreshold(90_000, 120_000, true)).toBe(91_400);
    expect(cacheAwareThreshold(42_000, 56_000, false)).toBe(42_000);
    // The previous defaults: a flat 12,000-token cap.
    const flat = { ratio: 0.85, maxTokens: 12_000, referenceBudget: Number.POSITIVE_INFINITY };
    expect(cacheAwareThreshold(42_000, 56_000, true, flat)).toBe(53_900);
    expect(cacheAwareThreshold(90_000, 120_000, true, flat)).toBe(102_000);
  });

  it('H5: the wait options: ratio, cap, fallbacks', () => {
    // The options: halfway without a cap is the earlier default; a bad ratio falls back to 0.85.
    expect(cacheAwareThreshold(18_000, 24_000, true, { ratio: 0.5, maxTokens: 1e9 })).toBe(21_000);
    expect(cacheAwareThreshold(18_000, 24_000, true, { ratio: 0.5, maxTokens: 1_000 })).toBe(19_000);
    expect(cacheAwareThreshold(18_000, 24_000, true, { ratio: 7, maxTokens: 1e9 })).toBe(23_100);
    expect(cacheAwareThreshold(18_000, 24_000, false)).toBe(18_000);
    expect(cacheAwareThreshold(null, 24_000, true)).toBeNull();
    expect(cacheAwareThreshold(18_000, null, true)).toBe(18_000);
  });
  it('C1: below clearAtLeast no step can fire: the pass that skips the stubs gives what the full pass gives', () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.subarray(['a', 'b', 'c', 'd', 'e', 'zz']),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 3_000 }),
        (h, kept, keepToolUses, localTrigger) => {
          const n = deepFreeze(normalizeHistory(h));
          const total = est.history(n);
          // At exactly `total` the full pass runs and no step fires (a stub saves less than its
          // result); one token more and the pass skips every stub but those of carried results.
          const at = (clearAtLeast: number) =>
            clearOldToolResultsWithRecentBatches(n, {
              estimator: est,
              policy: { keepToolUses, keepRecentToolBatches: 1, clearAtLeast },
              localTrigger,
              evidenceBudget: 0,
              keepCleared: new Set(kept),
            });
          const full = at(total);
          const skipped = at(total + 1);
          expect(skipped.messages).toEqual(full.messages);
          skipped.messages.forEach((m, i) => expect(m).toBe(full.messages[i])); // same stubs
          expect(skipped.diagnostics).toEqual(full.diagnostics);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('C1: between steps a long history is not stubbed again: no result is estimated beyond the history itself', () => {
    const own = createEstimator({ encoding: 'chars' });
    const h = history(12);
    const between = () =>
      clearOldToolResultsWithRecentBatches(h, {
        estimator: own,
        policy: { keepToolUses: 1, keepRecentToolBatches: 1, clearAtLeast: Number.MAX_SAFE_INTEGER },
        localTrigger: 1,
        evidenceBudget: 0,
      });
    expect(between().diagnostics.clearingApplied).toBe(true);
    const before = own.stats();
    const again = between();
    expect(clearedIds(again.messages)).toEqual([]);
    // The same history again: its tokens are known, so nothing is estimated at all.
    expect(own.stats()).toEqual(before);
  });
});
