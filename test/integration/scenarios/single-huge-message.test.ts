import { afterAll, describe, expect, it } from '@jest/globals';
import { charsCounter, freeEncoders } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { msg } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';

afterAll(freeEncoders);

describe('a pass that shrinks tokens but not the message count (S3, H3)', () => {
  it('S3: one huge message summarized into one message counts as compacted, not unchanged', async () => {
    const estimator = createEstimator({ counter: charsCounter });
    const huge = `Please review this log and fix the failure.\n${'ERROR worker 7 timed out waiting for lock\n'.repeat(9_000)}`;
    const session = createCompactorSession({
      estimator,
      limits: { capacity: 32_000, reservedOutput: 4_000 },
    });
    session.append(msg.user('a'), msg.assistant(huge));
    const before = estimator.history(session.history);
    const report = await session.compact({ mode: 'manual' });
    expect(report.status).toBe('compacted');
    expect(estimator.history(session.history)).toBeLessThan(before / 4);
  });
});
