import { describe, expect, it } from '@jest/globals';
import { charsCounter } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { msg } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';

describe('session budgets follow the clearing policy (B3, B4)', () => {
  it('B3/B4: policy triggerTokens and evidenceWindowRatio reach both the reported budgets and the projection', () => {
    const estimator = createEstimator({ counter: charsCounter });
    const session = createCompactorSession({
      estimator,
      limits: { capacity: 200_000, reservedOutput: 8_000 },
      policy: { triggerTokens: 10_000, evidenceWindowRatio: 0.9 },
    });
    expect(session.budgets.localTrigger).toBe(10_000);
    expect(session.budgets.evidenceBudget).toBe(9_000);
    session.append(msg.user('task'));
    const d = session.prepareRequest().diagnostics;
    expect(d.localTrigger).toBe(10_000);
    expect(d.evidenceBudget).toBe(9_000);
  });

  it('B4: without a policy the defaults hold (40,000 trigger, evidence window 20,000)', () => {
    const session = createCompactorSession({ limits: { capacity: 200_000, reservedOutput: 8_000 } });
    expect(session.budgets.localTrigger).toBe(40_000);
    expect(session.budgets.evidenceBudget).toBe(20_000);
  });
});
