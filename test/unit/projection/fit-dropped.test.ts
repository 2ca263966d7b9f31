import { describe, expect, it } from '@jest/globals';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { analyzePairing, answerRecall, fitToWindow, recallIdOf } from '#src/projection/index.js';
import { body, call, charsEstimator, deepFreeze } from '#support/projection/helpers.js';

const est = charsEstimator();
const limits = { capacity: 100_000, reservedOutput: 1_000, evidenceWindowRatio: 0.5 };
const policy = { enabled: true, keepToolUses: 1, keepRecentToolBatches: 1 };

/** One read of `file` whose result is `chars` long and holds the file's own marker. */
const read = (n: number, chars: number): Message[] => {
  const id = `c${n}`;
  const args = JSON.stringify({ path: `file-${String(n).padStart(2, '0')}.txt` });
  return [
    msg.assistant(`reading file ${n}: ${body(600, 'w')}`, [call(id, 'read_file', args)]),
    msg.tool(id, `MARKER-${n}\n${body(chars, String.fromCharCode(97 + n))}`, 'read_file'),
  ];
};

/** Recall ids and span ids a text names, in order. */
const idsIn = (text: string) => [...text.matchAll(/\b([rs]-[0-9a-f]{8})\b/g)].map((m) => m[1]);

describe('exchanges left out of a small window leave an address', () => {
  // A task, an agent's environment among its messages, eight reads whose assistant text alone
  // is too large for the window, and the newest read.
  const history = deepFreeze([
    msg.user('read every file, then say the marker of file 1'),
    msg.system(`# Environment\n${body(400, 'e')}`),
    ...[1, 2, 3, 4, 5, 6, 7, 8].flatMap((n) => read(n, 300)),
  ]);
  const budget = 1_200;
  const fitted = fitToWindow(history, { budgetTokens: budget, limits, policy, estimator: est });
  const task = textOf(fitted.messages[0].content);

  it('C1: the task names the left-out results by recall id, newest first, and the request still fits', () => {
    expect(est.history(history)).toBeGreaterThan(budget);
    expect(fitted.droppedMessages).toBeGreaterThan(0);
    expect(fitted.projectedTokens).toBeLessThanOrEqual(budget);
    expect(est.history(fitted.messages)).toBe(fitted.projectedTokens);
    expect(fitted.messages.filter((m) => m.role === 'system')).toEqual([history[1]]);
    expect(analyzePairing(fitted.messages).valid).toBe(true);
    const kept = new Set(fitted.messages.map((m) => m.toolCallId));
    const gone = history.filter((m) => m.role === 'tool' && !kept.has(m.toolCallId));
    expect(gone.length).toBeGreaterThan(0);
    const ids = idsIn(task);
    const results = ids.filter((id) => id.startsWith('r-'));
    // The newest left-out results first, one line each, then one span id.
    expect(results.length).toBeGreaterThan(0);
    expect(results).toEqual(gone.map(recallIdOf).reverse().slice(0, results.length));
    expect(ids.at(-1)).toMatch(/^s-[0-9a-f]{8}$/);
    expect(task.startsWith('read every file, then say the marker of file 1\n\n[compactor: ')).toBe(true);
  });

  it('C1: recall resolves each named id from the history, and the span id lists every left-out result', () => {
    for (const id of idsIn(task).filter((i) => i.startsWith('r-'))) {
      const answer = answerRecall(history, { id });
      expect(answer.found).toBe(true);
      expect(answer.text).toMatch(/^MARKER-\d\n/);
    }
    const span = answerRecall(history, { id: idsIn(task).at(-1) });
    expect(span.found).toBe(true);
    const listed = idsIn(span.text.split('\n').slice(1).join('\n'));
    const kept = new Set(fitted.messages.map((m) => m.toolCallId));
    const gone = history.filter((m) => m.role === 'tool' && !kept.has(m.toolCallId)).map(recallIdOf);
    expect(listed).toEqual(gone.reverse());
    // The oldest, file 1, resolves from the list.
    expect(answerRecall(history, { id: listed.at(-1) }).text.startsWith('MARKER-1\n')).toBe(true);
    expect(answerRecall(history, { id: 's-00000000' }).found).toBe(false);
  });

  it('C1: the note is the same bytes while the same exchanges are left out', () => {
    const next = deepFreeze([...history, msg.user('ok')]);
    const again = fitToWindow(next, {
      budgetTokens: budget + est.message(msg.user('ok')),
      limits,
      policy,
      estimator: est,
    });
    expect(again.droppedMessages).toBe(fitted.droppedMessages);
    expect(again.messages[0]).toEqual(fitted.messages[0]);
  });

  it('C1: with room for only the newest exchange and a short note, the note is cut to fewer lines, ends with the span id, and the request still fits', () => {
    const newest = est.history([...history.slice(0, 2), ...history.slice(-2)]);
    const tight = fitToWindow(history, { budgetTokens: newest + 60, limits, policy, estimator: est });
    expect(tight.projectedTokens).toBeLessThanOrEqual(newest + 60);
    const ids = idsIn(textOf(tight.messages[0].content));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(3);
    // The span id lists the first file's result, which recall returns whole.
    const list = answerRecall(history, { id: ids.at(-1) }).text;
    expect(list).toContain(recallIdOf(history[3]));
    expect(answerRecall(history, { id: recallIdOf(history[3]) }).text).toMatch(/^MARKER-1\n/);
  });
});

describe('an agent that sends its environment as a user message before the request', () => {
  // Codex opens with a user message holding its environment, then the user's request.
  const environment = msg.user(`<environment_context>\n${body(300, 'e')}\n</environment_context>`);
  const request = msg.user('read every file, then say the marker of file 1');
  const history = deepFreeze([
    environment,
    request,
    ...[1, 2, 3, 4, 5, 6, 7, 8].flatMap((n) => read(n, 300)),
  ]);
  const budget = 1_400;
  const fitted = fitToWindow(history, { budgetTokens: budget, limits, policy, estimator: est });

  it('C1: both opening user messages are kept, the note goes on the request, and the request fits', () => {
    expect(fitted.droppedMessages).toBeGreaterThan(0);
    expect(fitted.projectedTokens).toBeLessThanOrEqual(budget);
    expect(fitted.messages[0]).toEqual(environment);
    const task = textOf(fitted.messages[1].content);
    expect(task.startsWith('read every file, then say the marker of file 1\n\n[compactor: ')).toBe(true);
    expect(idsIn(task).at(-1)).toMatch(/^s-[0-9a-f]{8}$/);
    expect(analyzePairing(fitted.messages).valid).toBe(true);
  });
});
