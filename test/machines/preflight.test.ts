import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '../../src/messages/message.js';
import { createTurnRunner, RequestOverWindowError } from '../../src/runtime/index.js';
import { estimator, FakeSummarizer } from './fake-summarizer.js';

// capacity 2,000 − reserved 200: the prompt budget is 1,800 tokens, compaction threshold 1,350 (H5).
const limits = { capacity: 2_000, reservedOutput: 200 };

/** Large user turns: nothing to clear, so pressure stays over the prompt budget. */
function chattySession(turns: number): Message[] {
  const h: Message[] = [msg.system('You are a coding agent.')];
  for (let i = 0; i < turns; i++)
    h.push(msg.user(`Turn ${i}: ${'explain the repository layout in detail. '.repeat(12)}`));
  return h;
}

describe('preflight advisory (H4)', () => {
  it('H4: a request over the prompt budget is reported, and the turn still completes with the existing projection', async () => {
    const s = new FakeSummarizer();
    s.reply = () => 'not a template'; // the summary is rejected (§14), so compaction fails
    const history = chattySession(20);
    const runner = createTurnRunner({ estimator, limits, compaction: { summarizer: s } });
    const result = await runner.runTurn({ turnId: 'h4', history });
    expect(result.decision).toBe('failed');
    expect(result.history).toBe(history);
    expect(result.advisory).not.toBeNull();
    expect(result.advisory!.budgetTokens).toBe(1_800);
    expect(result.advisory!.overBudget).toBe(true);
    expect(result.advisory!.estimatedTokens).toBe(result.pressureTokens);
    expect(result.advisory!.percentUsed).toBe(Math.round((result.pressureTokens! / 1_800) * 100));
    // Advisory only: the request is still produced, unchanged (nothing to clear; the caller decides what to send).
    expect(result.request).toEqual(history);
  });

  it('H4: below the budget the advisory says so and nothing is blocked', async () => {
    const s = new FakeSummarizer();
    const result = await createTurnRunner({ estimator, limits, compaction: { summarizer: s } }).runTurn({
      turnId: 'h4b',
      history: chattySession(1),
    });
    expect(result.decision).toBe('below-threshold');
    expect(result.advisory).toMatchObject({ budgetTokens: 1_800, overBudget: false });
    expect(result.advisory!.percentUsed).toBeLessThan(100);
  });

  it('H4/§14: a guarded turn whose request exceeds the window even after clearing old tool results fails fast with a one-line error', async () => {
    const s = new FakeSummarizer();
    const runner = createTurnRunner({ estimator, limits, compaction: { summarizer: s } });
    const guard = { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null };
    const e = await runner
      .runTurn({ turnId: 'g1', history: chattySession(20), loopGuard: guard })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestOverWindowError);
    const message = (e as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(
      /^the next request needs [\d,]+ tokens but the window holds 1,800 \(capacity 2,000 − 200 reserved for output\); automatic compaction is paused \(repeated failures\)/,
    );
    expect(s.requests).toHaveLength(0);
    // Under the window a guarded turn still completes.
    const ok = await runner.runTurn({ turnId: 'g2', history: chattySession(2), loopGuard: guard });
    expect(ok.decision).not.toBe('failed');
  });
});
