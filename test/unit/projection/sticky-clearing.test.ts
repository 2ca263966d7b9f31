import { describe, it, expect } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import {
  clearedCallIds,
  fitToWindow,
  keepClearedOf,
  projectRequest,
  stepwiseClearing,
} from '#src/projection/index.js';
import { batch, charsEstimator, deepFreeze, isStub } from '#support/projection/helpers.js';

const est = charsEstimator();
const keptIds = (out: readonly Message[]) =>
  out.filter((m) => m.role === 'tool' && !isStub(m)).map((m) => m.toolCallId);
const limits = { capacity: 100_000, reservedOutput: 1_000, evidenceWindowRatio: 0.5 };
const policy = { enabled: true, keepToolUses: 1, keepRecentToolBatches: 1, clearAtLeast: 75_000 };

describe('clearing in steps, measured against the request sent last', () => {
  const history = deepFreeze([
    msg.user('read them all'),
    ...batch(['a'], 60_000),
    ...batch(['b'], 60_000),
    ...batch(['c'], 60_000),
  ]);

  it('C8: a step clears every old result at once, even when the limits set an evidence ratio', () => {
    const step = fitToWindow(history, { budgetTokens: 30_000, limits, policy, estimator: est });
    expect(keptIds(step.messages)).toEqual(['c']);
    expect(clearedCallIds(step.messages)).toEqual(new Set(['a', 'b']));
  });

  it('C8: between steps nothing new is cleared and what was sent cleared stays cleared, byte for byte', () => {
    const sent = fitToWindow(history, { budgetTokens: 30_000, limits, policy, estimator: est }).messages;
    const next = deepFreeze([...history, ...batch(['d'], 60_000)]);
    const { sticky, between } = stepwiseClearing(policy);
    expect(sticky).toBe(true);
    const projected = projectRequest(next, {
      limits,
      policy: between,
      estimator: est,
      ...keepClearedOf(sticky, sent),
    }).messages;
    expect(keptIds(projected)).toEqual(['c', 'd']);
    // The new request is the one sent plus the new messages.
    expect(JSON.stringify(projected.slice(0, sent.length))).toBe(JSON.stringify(sent));
  });

  it('C8: without a step size clearing is not sticky and keeps its rules', () => {
    const { sticky, between } = stepwiseClearing({ ...policy, clearAtLeast: 0 });
    expect(sticky).toBe(false);
    expect(between).toEqual({ ...policy, clearAtLeast: 0 });
    expect(keepClearedOf(false, history)).toEqual({});
    expect(clearedCallIds(null).size).toBe(0);
  });
});
