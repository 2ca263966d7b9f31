import { describe, expect, it } from '@jest/globals';
import { charsCounter } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { anchoredPressure, usageAnchor } from '#src/estimate/usage-anchor.js';
import { msg } from '#src/messages/message.js';

const est = createEstimator({ counter: charsCounter });

describe('usage-anchored pressure (T3)', () => {
  const sent = [msg.user('fix the failing test'), msg.assistant('looking at it now')];

  it('T3: reported input tokens plus the local estimate of messages added since', () => {
    const anchor = usageAnchor(sent, 1_234);
    const next = [...sent, msg.user('also update the docs')];
    const p = anchoredPressure(next, est, 500, anchor);
    expect(p).toEqual({ source: 'anchored', tokens: 1_234 + est.message(next[2]) });
    // The same request again: exactly the reported number.
    expect(anchoredPressure(sent, est, 500, anchor)).toEqual({ source: 'anchored', tokens: 1_234 });
  });

  it('T3: without an anchor the local estimate (overhead + history) alone works', () => {
    expect(anchoredPressure(sent, est, 500)).toEqual({
      source: 'estimated',
      tokens: 500 + est.history(sent),
    });
  });

  it('T3: a request that no longer starts with the anchored one (cleared, compacted) falls back to the estimate', () => {
    const anchor = usageAnchor(sent, 1_234);
    const compacted = [msg.user('Previous conversation summary: …'), msg.user('go on')];
    expect(anchoredPressure(compacted, est, 500, anchor).source).toBe('estimated');
    const cleared = [sent[0], msg.assistant('[cleared]'), msg.user('go on')];
    expect(anchoredPressure(cleared, est, 500, anchor).source).toBe('estimated');
    expect(anchoredPressure(sent.slice(0, 1), est, 500, anchor).source).toBe('estimated');
  });

  it('T3: clearing inside the anchored prefix (same last message) re-estimates the changed messages', () => {
    const big = msg.tool('c1', 'x'.repeat(8_000));
    const call = msg.assistant('', [{ id: 'c1', name: 'read', arguments: '{}' }]);
    const last = msg.user('next step');
    const request = [msg.user('go'), call, big, last];
    const reported = 500 + est.history(request);
    const anchor = usageAnchor(request, reported);
    const stub = msg.tool('c1', '{"cleared":"tool_result"}');
    const cleared = [request[0], call, stub, last, msg.user('and then')];
    const p = anchoredPressure(cleared, est, 500, anchor);
    // The provider counted the big result; the next request carries the stub instead.
    expect(p.tokens).toBe(reported - est.message(big) + est.message(stub) + est.message(cleared[4]));
    expect(p.tokens).toBe(500 + est.history(cleared));
    expect(p.source).toBe('anchored');
  });
});
