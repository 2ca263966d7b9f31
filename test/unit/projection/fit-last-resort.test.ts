import { describe, expect, it } from '@jest/globals';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { fitToWindow } from '#src/projection/index.js';
import { clearedResultText } from '#src/projection/stubs.js';
import { batch, body, charsEstimator, deepFreeze } from '#support/projection/helpers.js';

const est = charsEstimator();
const limits = { capacity: 100_000, reservedOutput: 1_000, evidenceWindowRatio: 0.5 };
const policy = { enabled: true, keepToolUses: 1, keepRecentToolBatches: 1 };

/** An exchange whose result the request sent last had cleared already. */
const clearedBatch = (id: string): Message[] => {
  const [call, result] = batch([id], 10);
  return [call, { ...result, content: clearedResultText('read_file', id) }];
};

describe('fitting a request when clearing every result is not enough', () => {
  // An agent's task, its environment as a system message among its messages, eight exchanges
  // whose results are stubs already and a large newest result.
  const history = deepFreeze([
    msg.user('read every file'),
    msg.system(`# Environment\n${body(2_000, 'e')}`),
    ...['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].flatMap(clearedBatch),
    ...batch(['i'], 8_000),
  ]);
  const all = est.history(history);

  it('C1: a system message among the messages is never left out, and cleared stubs are never cut into notes about themselves', () => {
    // Room for the task, the environment, a few stubs and a short preview of the newest result.
    const fitted = fitToWindow(history, { budgetTokens: 1_100, limits, policy, estimator: est });
    expect(all).toBeGreaterThan(1_100);
    expect(fitted.projectedTokens).toBeLessThanOrEqual(1_100);
    expect(fitted.messages.filter((m) => m.role === 'system')).toEqual([history[1]]);
    const results = fitted.messages.filter((m) => m.role === 'tool');
    // Every result but the newest is the stub as it was, byte for byte.
    for (const r of results.slice(0, -1))
      expect(textOf(r.content)).toBe(clearedResultText('read_file', r.toolCallId ?? ''));
    expect(textOf(results.at(-1)!.content)).toMatch(/^\[compactor: this tool output had about/);
    expect(fitted.droppedMessages).toBeGreaterThan(0);
  });
});
