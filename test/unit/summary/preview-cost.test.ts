import { afterAll, describe, expect, it } from '@jest/globals';
import { charsCounter, createEstimator, freeEncoders, type TokenCounter } from '#src/estimate/index.js';
import { msg } from '#src/messages/message.js';
import { pruneOversizedToolOutputs } from '#src/summary/index.js';
import { previewToFit, tailWithinTokens } from '#src/summary/preview.js';

afterAll(freeEncoders);

/** A chars counter that adds up how many UTF-16 units it was asked to count. */
function meteredCounter(): TokenCounter & { counted: number } {
  const c = {
    name: 'chars' as const,
    counted: 0,
    count(text: string): number {
      c.counted += text.length;
      return charsCounter.count(text);
    },
  };
  return c;
}

// About 5 MB of log lines: counting the text again shows as millions of units, while the
// head and tail searches count slices bounded by the preview budget (a few hundred thousand).
const big = Array.from(
  { length: 120_000 },
  (_, i) => `src/m${i % 97}.ts:${i}: warning W${i % 13} in step ${i}`,
).join('\n');

/** One build call whose tool result is the huge log. */
const buildWithBigResult = () => [
  msg.user('build'),
  msg.assistant('', [{ id: 'c1', name: 'build', arguments: '{}' }]),
  msg.tool('c1', big),
];

describe('previews of a huge tool result count its text once (L2, T2)', () => {
  it('L2: pruning a 5 MB tool result counts about its own length, not the remainder again', () => {
    const counter = meteredCounter();
    const est = createEstimator({ counter });
    const history = buildWithBigResult();
    const pruned = pruneOversizedToolOutputs(history, est);
    expect(pruned[2]).not.toBe(history[2]);
    // Once for the estimate, plus the short head/tail probes; the old remainder slice doubled it.
    expect(counter.counted).toBeGreaterThanOrEqual(big.length);
    expect(counter.counted - big.length).toBeLessThan(big.length / 5);
  });

  it('L3: fitting a history with the huge result into a budget counts it once as well', () => {
    const counter = meteredCounter();
    const est = createEstimator({ counter });
    const history = buildWithBigResult();
    const fitted = previewToFit(history, 2_000, est);
    expect(est.history(fitted)).toBeLessThanOrEqual(2_000);
    expect(counter.counted - big.length).toBeLessThan(big.length / 5);
  });

  it('L2: a tail searched from an offset is the tail of the remainder (same cut as slicing first)', () => {
    const est = createEstimator();
    const text = big.slice(0, 40_000) + ' 你好😀 end';
    for (const from of [0, 1, 17, 20_000, 39_990, text.length - 3, text.length])
      for (const tokens of [1, 40, 2_000, 100_000])
        expect(tailWithinTokens(text, tokens, est, from)).toBe(
          tailWithinTokens(text.slice(from), tokens, est),
        );
  });
});
