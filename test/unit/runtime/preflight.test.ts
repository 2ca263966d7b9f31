import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { WindowTooSmallError } from '#src/core/errors.js';
import { createTurnRunner, resolveRunConfig } from '#src/runtime/index.js';
import { estimator, FakeSummarizer } from '#support/runtime/fake-summarizer.js';

// capacity 2,000 − reserved 200: the prompt budget is 1,800 tokens, compaction threshold 1,350 (75 %).
const limits = { capacity: 2_000, reservedOutput: 200 };
// A window this small leaves a pass little room, so the defaults would clear instead of trying one.
const COMPACT_ALWAYS = { clearWhenPassBuysFewerTurns: 0 };

/** Large user turns: nothing to clear, so pressure stays over the prompt budget. */
function chattySession(turns: number): Message[] {
  const h: Message[] = [msg.system('You are a coding agent.')];
  for (let i = 0; i < turns; i++)
    h.push(msg.user(`Turn ${i}: ${'explain the repository layout in detail. '.repeat(12)}`));
  return h;
}

describe('preflight advisory (H4)', () => {
  it('H4: a request over the prompt budget is never blocked: the turn completes with the request made to fit', async () => {
    const s = new FakeSummarizer();
    s.reply = () => ''; // the summary comes back empty, so compaction fails
    const history = chattySession(20);
    const runner = createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits, policy: COMPACT_ALWAYS }),
      compaction: { summarizer: s },
    });
    const result = await runner.runTurn({ turnId: 'h4', history });
    expect(result.decision).toBe('failed');
    expect(result.history).toBe(history);
    // Never blocked, and never sent over the window: the request is made to fit (older turns left out, the task kept).
    expect(result.clearedToFit).toBe(true);
    expect(result.fit!.droppedMessages).toBeGreaterThan(0);
    expect(result.advisory).toMatchObject({ budgetTokens: 1_800, overBudget: false });
    expect(estimator.history(result.request!)).toBeLessThanOrEqual(1_800);
    expect(result.request!.slice(0, 2)).toEqual(history.slice(0, 2));
    expect(result.request!.at(-1)).toBe(history.at(-1));
  });

  it('H4: below the budget the advisory says so and nothing is blocked', async () => {
    const s = new FakeSummarizer();
    const result = await createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits, policy: COMPACT_ALWAYS }),
      compaction: { summarizer: s },
    }).runTurn({
      turnId: 'h4b',
      history: chattySession(1),
    });
    expect(result.decision).toBe('below-threshold');
    expect(result.advisory).toMatchObject({ budgetTokens: 1_800, overBudget: false });
    expect(result.advisory!.percentUsed).toBeLessThan(100);
  });

  it('H4/§14: a guarded turn whose request exceeds the window is made to fit, never failed: no summary call, no error', async () => {
    const s = new FakeSummarizer();
    const runner = createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits, policy: COMPACT_ALWAYS }),
      compaction: { summarizer: s },
    });
    const guard = { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null };
    const history = chattySession(20);
    const r = await runner.runTurn({ turnId: 'g1', history, loopGuard: guard });
    expect(r.decision).toBe('guarded');
    expect(r.clearedToFit).toBe(true);
    expect(estimator.history(r.request!)).toBeLessThanOrEqual(1_800);
    expect(r.request!.find((m) => m.role === 'user')).toBe(history[1]);
    expect(s.requests).toHaveLength(0);
  });

  it('§14: a window that cannot hold the fixed part of a request (prompt, task, reserved output) is one configuration error before any request', async () => {
    const s = new FakeSummarizer();
    const runner = createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits: { capacity: 2_000, reservedOutput: 200, prefixTokens: 1_700 } }),
      compaction: { summarizer: s },
    });
    const e = await runner.runTurn({ turnId: 'w1', history: chattySession(3) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WindowTooSmallError);
    const message = (e as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(
      /^the context window of 2,000 tokens cannot hold even the fixed part of a request/,
    );
    expect(s.requests).toHaveLength(0);
  });
});
