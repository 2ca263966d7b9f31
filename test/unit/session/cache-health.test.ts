import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createCacheHealthMonitor } from '#src/session/index.js';

const low = { inputTokens: 10_000, cachedInputTokens: 1_000 };
const good = { inputTokens: 10_000, cachedInputTokens: 9_000 };

describe('cache-health monitor (S5)', () => {
  it('S5: consecutive low-reuse requests build a streak; the alert fires once when it reaches alertAfter', () => {
    const m = createCacheHealthMonitor({ alertAfter: 3 });
    expect(m.recordUsage(low).lowReuseStreak).toBe(1);
    expect(m.recordUsage(low).alert).toBeNull();
    const third = m.recordUsage(low);
    expect(third.alert).toEqual({ request: 3, streak: 3, reuseRatio: 0.1 });
    expect(m.recordUsage(low).alert).toBeNull();
    expect(m.state().alerts).toHaveLength(1);
    expect(m.recordUsage(good).lowReuseStreak).toBe(0);
  });

  it('S5: a successful compaction resets only the streak; totals and cumulative alerts stay', () => {
    const m = createCacheHealthMonitor({ alertAfter: 2 });
    m.recordUsage(low);
    m.recordUsage(low);
    const before = m.state();
    m.onCompaction('compacted');
    const after = m.state();
    expect(after.lowReuseStreak).toBe(0);
    expect(after).toEqual({ ...before, lowReuseStreak: 0 });
    expect(after.alerts).toHaveLength(1);
    expect(after.totalInputTokens).toBe(20_000);
    expect(after.totalCachedInputTokens).toBe(2_000);
  });

  it('S5: failures and no-op passes do not reset the streak', () => {
    const m = createCacheHealthMonitor();
    m.recordUsage(low);
    m.recordUsage(low);
    m.onCompaction('failed');
    m.onCompaction('unchanged');
    expect(m.state().lowReuseStreak).toBe(2);
    expect(m.recordUsage(low).alert?.streak).toBe(3);
  });

  it('S5: short prompts (below minInputTokens) never count as low reuse; cached counts are clamped to the input', () => {
    const m = createCacheHealthMonitor({ minInputTokens: 1_024 });
    expect(m.recordUsage({ inputTokens: 500, cachedInputTokens: 0 }).lowReuse).toBe(false);
    expect(m.recordUsage({ inputTokens: 2_000, cachedInputTokens: 5_000 }).reuseRatio).toBe(1);
    expect(m.state().totalCachedInputTokens).toBe(2_000);
  });

  it('S5: invalid usage (negative or fractional counts) is rejected', () => {
    const m = createCacheHealthMonitor();
    expect(() => m.recordUsage({ inputTokens: -1 })).toThrow();
    expect(() => m.recordUsage({ inputTokens: 1.5 })).toThrow();
    expect(() => createCacheHealthMonitor({ lowReuseRatio: 0 })).toThrow();
  });

  it('S5 (property): totals equal the sums of what was recorded, whatever compactions happen in between', () => {
    const event = fc.oneof(
      fc.record({ inputTokens: fc.nat(50_000), cachedInputTokens: fc.nat(50_000) }),
      fc.constantFrom('compacted' as const, 'unchanged' as const, 'failed' as const),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const m = createCacheHealthMonitor({ alertAfter: 2 });
        let input = 0;
        let cached = 0;
        let alerts = 0;
        for (const e of events) {
          if (typeof e === 'string') {
            const streak = m.state().lowReuseStreak;
            m.onCompaction(e);
            expect(m.state().lowReuseStreak).toBe(e === 'compacted' ? 0 : streak);
          } else {
            input += e.inputTokens;
            cached += Math.min(e.cachedInputTokens, e.inputTokens);
            if (m.recordUsage(e).alert) alerts++;
          }
          expect(m.state().alerts).toHaveLength(alerts);
        }
        expect(m.state().totalInputTokens).toBe(input);
        expect(m.state().totalCachedInputTokens).toBe(cached);
      }),
      { numRuns: 100 },
    );
  });
});
