import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import {
  analyzePairing,
  clearOldToolResultsWithRecentBatches,
  isRequestHistoryValid,
  normalizeHistory,
  projectRequest,
} from '#src/projection/index.js';
import { charsEstimator, deepFreeze, isStub } from '#support/projection/helpers.js';
import { historyArb } from '#support/projection/history-arb.js';

const est = charsEstimator();
const RUNS = { numRuns: 200 };

const policyArb = fc.record({
  keepToolUses: fc.integer({ min: 0, max: 3 }),
  keepRecentToolBatches: fc.integer({ min: 0, max: 3 }),
  clearToolInputs: fc.boolean(),
});

describe('properties (fast-check)', () => {
  it('N1–N5: normalization yields a protocol-valid history, is idempotent and never mutates its input', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const before = JSON.stringify(h);
        const n = normalizeHistory(h);
        expect(isRequestHistoryValid(n)).toBe(true);
        expect(normalizeHistory(n)).toBe(n);
        if (isRequestHistoryValid(h)) expect(n).toBe(h);
        expect(JSON.stringify(h)).toBe(before);
      }),
      RUNS,
    );
  });

  it('C1–C9: clearing stays valid, never grows, is idempotent, keeps protected batches byte-identical', () => {
    fc.assert(
      fc.property(
        historyArb,
        policyArb,
        fc.integer({ min: 1, max: 6_000 }),
        fc.integer({ min: 0, max: 3_000 }),
        (h, policy, localTrigger, evidenceBudget) => {
          const n = deepFreeze(normalizeHistory(h));
          const before = JSON.stringify(n);
          const opts = { estimator: est, policy, localTrigger, evidenceBudget };
          const r = clearOldToolResultsWithRecentBatches(n, opts);
          expect(JSON.stringify(n)).toBe(before);
          expect(r.messages).toHaveLength(n.length);
          expect(isRequestHistoryValid(r.messages)).toBe(true);
          expect(est.history(r.messages)).toBeLessThanOrEqual(est.history(n));
          expect(r.diagnostics.projectedTokens).toBe(est.history(r.messages));
          expect(clearOldToolResultsWithRecentBatches(r.messages, opts).messages).toBe(r.messages);

          // Changed messages are stubs of tool results or input-cleared copies of calls (same ids, names).
          r.messages.forEach((m, i) => {
            if (m === n[i]) return;
            if (m.role === 'tool') expect(isStub(m)).toBe(true);
            else
              expect(m.toolCalls?.map((c) => [c.id, c.name])).toEqual(
                n[i].toolCalls?.map((c) => [c.id, c.name]),
              );
          });
          // The newest keepRecentToolBatches batches are replayed byte for byte.
          const batches = analyzePairing(n).batches;
          for (const b of batches.slice(
            batches.length - Math.min(policy.keepRecentToolBatches, batches.length),
          ))
            for (const i of [b.assistantIndex, ...b.resultIndices]) expect(r.messages[i]).toBe(n[i]);
        },
      ),
      RUNS,
    );
  });

  it('H1/C11: projectRequest output is protocol-valid and no larger than the normalized history', () => {
    fc.assert(
      fc.property(
        historyArb,
        policyArb,
        fc.integer({ min: 0, max: 20_000 }),
        fc.boolean(),
        (h, policy, cap, interactive) => {
          const r = projectRequest(h, {
            limits: { capacity: cap, reservedOutput: 500 },
            policy,
            estimator: est,
            interactive,
            nativeContextEdits: true,
          });
          expect(isRequestHistoryValid(r.messages)).toBe(true);
          expect(r.diagnostics.projectedTokens).toBeLessThanOrEqual(est.history(normalizeHistory(h)));
          if (interactive) expect(r.diagnostics.clearedResults).toBe(0);
        },
      ),
      RUNS,
    );
  });
});
