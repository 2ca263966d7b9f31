import { afterAll, describe, expect, it } from '@jest/globals';
import { loadCorpusSessions } from '#dev/bench/corpus-sessions.js';
import { runWindow } from '#dev/bench/retention-runs.js';
import { noClearingPolicy } from '#dev/replay/policies/index.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { rawDir } from '#support/paths.js';

afterAll(freeEncoders);

describe('receipts on real sessions: honest offline summaries rarely need amending', () => {
  it('R3: at 32k the offline summary carries what each compaction must keep in under 1 % of compactions amended', async () => {
    // The sessions whose compactions were amended most before the summary input was fixed.
    const sessions = loadCorpusSessions(rawDir).sessions.filter((s) =>
      /^(?:sphinx-doc__sphinx-9258|sympy__sympy-13091|django__django-16560)/.test(s.name),
    );
    expect(sessions).toHaveLength(3);
    const [run] = await runWindow(sessions, 32_000, [noClearingPolicy], createEstimator());
    const totals = run.perSession.map((s) => (s.ok ? s.result.totals : null));
    expect(totals).not.toContain(null);
    const compactions = totals.reduce((n, t) => n + t!.receiptCompactions, 0);
    const amended = totals.reduce((n, t) => n + t!.amendedCompactions, 0);
    // Measured 18 compactions, 14 of them amended before; none now.
    expect(compactions).toBeGreaterThanOrEqual(10);
    expect(amended / compactions).toBeLessThan(0.01);
  });
});
