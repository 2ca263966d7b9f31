import { afterAll, describe, expect, it } from '@jest/globals';
import { createRunningTotal } from '#dev/bench/running-total.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { freeEncoders } from '#src/estimate/counters.js';
import { msg } from '#src/messages/message.js';

// The running total is the estimator benchmark's measure of a turn's cost (dev/, not shipped);
// the product gets the same O(new messages) cost from the estimator's per-message cache.
afterAll(freeEncoders);

describe('running total (T2: O(new messages) per turn)', () => {
  it('T2: an appended history estimates only the new messages', () => {
    const e = createEstimator();
    const rt = createRunningTotal(e);
    const h = [msg.user('first'), msg.assistant('second')];
    expect(rt.total(h)).toBe(e.history(h));
    const misses = e.stats().messageMisses;
    const hits = e.stats().messageHits;
    h.push(msg.user('third'));
    expect(rt.total(h)).toBe(e.history(h));
    // one miss for the new message; the e.history() cross-check above accounts for the hits
    expect(e.stats().messageMisses).toBe(misses + 1);
    expect(e.stats().messageHits).toBeGreaterThan(hits);
  });

  it('T2: a replaced history (compaction, copy with edits) is summed afresh', () => {
    const e = createEstimator();
    const rt = createRunningTotal(e);
    const h = [msg.user('a long first message'), msg.assistant('reply')];
    rt.total(h);
    const compacted = [msg.user('summary')];
    expect(rt.total(compacted)).toBe(e.history(compacted));
    const edited = [msg.user('a long first message'), msg.assistant('a different reply')];
    expect(rt.total(edited)).toBe(e.history(edited));
  });
});
