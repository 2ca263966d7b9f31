import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { createOfflineSummarizer } from '#src/summary/index.js';

afterAll(freeEncoders);
const est = createEstimator();

/** A long task (an issue pasted whole, its base commit in the middle) and a build that failed. */
function fork(): Message[] {
  const issue = Array.from(
    { length: 150 },
    (_, i) => `Issue text line ${i}: the match expression aliases iso.`,
  );
  issue.splice(75, 0, 'Compare against the base commit e5398b7ab793e2b11f930aa375b9212887614b03.');
  return [
    msg.user(issue.join('\n')),
    msg.assistant('Building.', [
      { id: 'b1', name: 'bash', arguments: JSON.stringify({ command: 'make -C build' }) },
    ]),
    msg.tool('b1', "make: *** No rule to make target 'all'.  Stop.\nexit code 2", 'bash'),
  ];
}

describe('the offline summary in a small output budget', () => {
  it('L8: a long task takes at most 30 % of the budget, so the failed command and the ids the goal cut still fit', async () => {
    const summary = await createOfflineSummarizer({ estimator: est }).summarize({
      model: 'offline',
      messages: fork(),
      instructions: 'Summarize.',
      maxOutputTokens: 1_000,
    });
    const goal = summary.text.split('\n').find((l) => l.startsWith('- Issue text line 0'))!;
    expect(est.text(goal)).toBeLessThanOrEqual(300 + 2);
    expect(summary.text).toMatch(/## Failed\n- `make -C build` → exit 2/);
    expect(summary.text).toContain('- Ids in the request: e5398b7ab793e2b11f930aa375b9212887614b03');
    expect(est.text(summary.text)).toBeLessThanOrEqual(1_000);
  });
});
