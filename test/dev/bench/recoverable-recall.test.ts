import { afterAll, describe, expect, it } from '@jest/globals';
import { loadCorpusSessions } from '#dev/bench/corpus-sessions.js';
import { recoverableRecallSection } from '#dev/bench/recoverable-recall-section.js';
import { runWindow } from '#dev/bench/retention-runs.js';
import { compactorPolicy } from '#dev/replay/policies/index.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { rawDir } from '#support/paths.js';

afterAll(freeEncoders);

describe('recoverable recall: every needed result is in the request or a recall away', () => {
  it('§14: at 8k the defaults keep every needed result of three real sessions recoverable, summarized ones through pointer lines and span lists', async () => {
    const sessions = loadCorpusSessions(rawDir).sessions.filter((s) =>
      /^(?:sphinx-doc__sphinx-9258|sympy__sympy-13091|django__django-16560)/.test(s.name),
    );
    expect(sessions).toHaveLength(3);
    const [run] = await runWindow(sessions, 8_000, [compactorPolicy()], createEstimator());
    expect(run.failures).toEqual([]);
    const t = run.totals;
    // Compaction ran and took needed results out of the request.
    expect(t.summaryCalls).toBeGreaterThan(0);
    expect(t.needed - t.present).toBeGreaterThan(10);
    // Every one of them comes back through the product's own recall.
    expect(t.recoverable).toBe(t.needed);
    // Some only through a summary's span list: their own id was not on a pointer line.
    expect(t.viaSpan).toBeGreaterThan(0);
    expect(t.recallCalls).toBeGreaterThanOrEqual(t.needed - t.present + t.viaSpan);
    const section = recoverableRecallSection(new Map([[8_000, [run]]]));
    expect(section.rows[0].slice(0, 4)).toEqual(['8k', 'compactor', t.needed, '100.0%']);
  });
});
