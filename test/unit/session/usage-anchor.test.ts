import { afterAll, describe, expect, it } from '@jest/globals';
import { charsCounter, freeEncoders } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { msg } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';

afterAll(freeEncoders);

describe('session pressure anchored on provider usage (T3)', () => {
  it('T3: the local estimate works alone; after recordUsage the next request is anchored on it', () => {
    const estimator = createEstimator({ counter: charsCounter });
    const session = createCompactorSession({ estimator, limits: { capacity: 100_000, prefixTokens: 300 } });
    session.append(msg.user('fix the failing test in src/app.ts'), msg.assistant('looking'));
    const first = session.prepareRequest();
    expect(first.pressure).toEqual({ source: 'estimated', tokens: 300 + estimator.history(first.messages) });

    // The provider counted 5,000 input tokens for the request that was sent (tokenizer differs).
    const verdict = session.recordUsage({ inputTokens: 5_000, cachedInputTokens: 4_000 }, first.messages);
    expect(verdict).toEqual({ reuseRatio: 0.8, lowReuse: false, lowReuseStreak: 0, alert: null });
    session.append(msg.user('and update the changelog'));
    const second = session.prepareRequest();
    expect(second.pressure).toEqual({
      source: 'anchored',
      tokens: 5_000 + estimator.message(second.messages[second.messages.length - 1]),
    });
    // Usage also fed the low-cache-reuse monitor.
    expect(session.cacheHealth.state().requests).toBe(1);
  });
});
