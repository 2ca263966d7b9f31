import { afterAll, describe, expect, it } from '@jest/globals';
import { loadCorpusSessions } from '#dev/bench/corpus-sessions.js';
import { runWindow } from '#dev/bench/retention-runs.js';
import { compactorPolicy, noClearingPolicy } from '#dev/replay/policies/index.js';
import type { RetentionPolicy } from '#dev/replay/types.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { rawDir } from '#support/paths.js';

afterAll(freeEncoders);

/** Replays the three bundled sessions `names` picks at `window`: compactions with a receipt, and those amended. */
async function receipts(names: RegExp, window: number, policy: RetentionPolicy) {
  const sessions = loadCorpusSessions(rawDir).sessions.filter((s) => names.test(s.name));
  expect(sessions).toHaveLength(3);
  const [run] = await runWindow(sessions, window, [policy], createEstimator());
  const totals = run.perSession.map((s) => (s.ok ? s.result.totals : null));
  expect(totals).not.toContain(null);
  return {
    compactions: totals.reduce((n, t) => n + t!.receiptCompactions, 0),
    amended: totals.reduce((n, t) => n + t!.amendedCompactions, 0),
  };
}

describe('receipts on real sessions: honest offline summaries rarely need amending', () => {
  it('R3: at 32k the offline summary carries what each compaction must keep in under 1 % of compactions amended', async () => {
    // The sessions whose compactions were amended most before the summary input was fixed.
    const { compactions, amended } = await receipts(
      /^(?:sphinx-doc__sphinx-9258|sympy__sympy-13091|django__django-16560)/,
      32_000,
      noClearingPolicy,
    );
    // Measured 18 compactions, 14 of them amended before; none now.
    expect(compactions).toBeGreaterThanOrEqual(10);
    expect(amended / compactions).toBeLessThan(0.01);
  });

  it("R3: at 8k the defaults' compactions find the paths and commands the summary leaves out on its span list: under 1 % amended", async () => {
    // The real sessions whose compactions at 8k were amended most while only the summary and its
    // pointer lines counted (11 of 31 of their compactions).
    const { compactions, amended } = await receipts(
      /^(?:django__django-16560|psf__requests-1142|sphinx-doc__sphinx-9258)/,
      8_000,
      compactorPolicy(),
    );
    expect(compactions).toBeGreaterThanOrEqual(20);
    expect(amended / compactions).toBeLessThan(0.01);
  });
});
