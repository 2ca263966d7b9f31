import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { BudgetError } from '#src/core/errors.js';
import { boundHistoryForSummary } from '#src/summary/index.js';

afterAll(freeEncoders);

const estimator = createEstimator();

function failureOf(history: readonly Message[]): Error {
  try {
    boundHistoryForSummary(history, { budget: 6_000, instructionsTokens: 400, estimator });
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected boundHistoryForSummary to throw');
}

describe('a fork with nothing to summarize (L3, L6)', () => {
  it.each([
    ['an empty history', []],
    ['a history of orphan tool results only', [msg.tool('a', 'x '.repeat(50)), msg.tool('b', 'y')]],
  ])('L6: %s fails before dispatch naming the cause, not a budget that did not run out', (_, history) => {
    const e = failureOf(history);
    expect(e).toBeInstanceOf(BudgetError); // still a pre-dispatch budget failure for the machines
    expect(e.message).toMatch(/nothing to summarize/);
    expect(e.message).not.toMatch(/needs \d+ tokens but only \d+ are available/);
    expect(e.message).toContain(`${history.length} message(s)`);
  });
});

describe('an empty fork caused by the budget (L3)', () => {
  it('L3: a real group that cannot fit keeps the exhausted-allowance message', () => {
    let e: Error | undefined;
    try {
      boundHistoryForSummary([msg.user('hello '.repeat(200)), msg.assistant('ok')], {
        budget: 406,
        instructionsTokens: 400,
        estimator,
      });
    } catch (err) {
      e = err as Error;
    }
    expect(e).toBeInstanceOf(BudgetError);
    expect(e?.message).toMatch(/needs \d+ tokens but only 406 are available/);
  });
});
