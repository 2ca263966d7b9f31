import { afterAll, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { syntheticLargeReadSessions } from '#dev/bench/corpus-sessions.js';
import { summaryCallsPer10, windowLimits } from '#dev/bench/retention-runs.js';
import { emptyTotals } from '#dev/replay/replay.js';

afterAll(freeEncoders);

describe('retention sweep: small windows and large tool results (§14)', () => {
  it('§14: the large-read sessions hold only file reads of about 2,000 to 8,000 tokens, with distinct names and sizes', () => {
    const est = createEstimator();
    const sessions = syntheticLargeReadSessions(3);
    expect(sessions.map((s) => s.name)).toEqual([
      'synthetic:reads-01-40k',
      'synthetic:reads-02-80k',
      'synthetic:reads-03-120k',
    ]);
    for (const s of sessions) {
      expect(s.synthetic).toBe(true);
      const reads = s.messages.filter((m) => m.role === 'tool');
      expect(reads.length).toBeGreaterThan(4);
      expect(reads.every((m) => m.toolName === 'read_file')).toBe(true);
      const sizes = reads.map((m) => est.message(m));
      expect(Math.min(...sizes)).toBeGreaterThanOrEqual(1_500);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(9_000);
      // The agent uses what it read, so the evidence metric has needs in these sessions too.
      expect(s.needs.size).toBeGreaterThan(0);
    }
  });
  it('§14: small windows reserve a quarter of the window for output, 32k and more reserve 8,000', () => {
    expect([8_000, 16_000, 32_000, 200_000].map((w) => windowLimits(w).reservedOutput)).toEqual([
      2_000, 4_000, 8_000, 8_000,
    ]);
  });
  it('§14: summary calls per 10 turns count calls against agent steps', () => {
    expect(summaryCallsPer10({ ...emptyTotals(), turns: 40, summaryCalls: 3 })).toBe(0.75);
    expect(summaryCallsPer10(emptyTotals())).toBe(0);
  });
});
