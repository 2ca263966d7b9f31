import { afterAll, describe, expect, it } from '@jest/globals';
import { loadCorpusSessions } from '#dev/bench/corpus-sessions.js';
import { recallOf, runWindow, verbatimRecallOf } from '#dev/bench/retention-runs.js';
import { summaryRecallSection } from '#dev/bench/summary-recall-section.js';
import { noClearingPolicy } from '#dev/replay/policies/index.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { rawDir } from '#support/paths.js';

afterAll(freeEncoders);

describe('retention pilot: summary recall reported on its own', () => {
  it('§14: on real sessions at 32k the offline summary carries facts of compacted needed results, and recall counts them', async () => {
    // Two long real sessions whose needed results get compacted at 32k.
    const sessions = loadCorpusSessions(rawDir).sessions.filter((s) =>
      /^(?:sphinx-doc__sphinx-9258|sympy__sympy-13091)/.test(s.name),
    );
    expect(sessions).toHaveLength(2);
    const runs = await runWindow(sessions, 32_000, [noClearingPolicy], createEstimator());
    const t = runs[0].totals;
    expect(t.compactedNeeded).toBeGreaterThan(10);
    // Measured 15 of 35 (the earlier summarizer carried 0).
    expect(t.summaryRecalled).toBeGreaterThanOrEqual(8);
    expect(recallOf(t)).toBeCloseTo(verbatimRecallOf(t) + t.summaryRecalled / t.needed, 10);

    const section = summaryRecallSection(new Map([[32_000, runs]]), sessions);
    expect(section.headers).toEqual(['window', 'policy', 'real sessions', 'synthetic sessions', 'all']);
    expect(section.rows).toEqual([
      [
        '32k',
        'no-clearing',
        expect.stringMatching(new RegExp(`^${t.summaryRecalled}/${t.compactedNeeded} \\(`)),
        '—',
        expect.stringMatching(/%\)$/),
      ],
    ]);
    expect(section.notes?.join(' ')).toMatch(/real model summarizer was not measured/);
  });
});
