import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import { taskRange, textOf, type Message } from '#src/messages/message.js';
import { analyzePairing, answerRecall, fitToWindow, recallIdOf } from '#src/projection/index.js';
import { summaryMessage } from '#src/summary/rebuild.js';
import { deepFreeze } from '#support/projection/helpers.js';
import { rawDir } from '#support/paths.js';

afterAll(freeEncoders);

// A real SWE-agent run: its opening user messages are a demonstration of about 4,800 tokens and
// then the issue to solve; the first answer comes after both.
const session = readSessionFile(join(rawDir, 'SWE-agent__SWE-agent/gpt4__pydicom__pydicom-1458.traj'))
  .sessions[0].messages;
const est = createEstimator();
const limits = { capacity: 8_000, reservedOutput: 2_000 };
const policy = { enabled: true, keepToolUses: 1, keepRecentToolBatches: 1 };

/** Recall ids and span ids a text names, in order. */
const idsIn = (text: string) => [...text.matchAll(/\b([rs]-[0-9a-f]{8})\b/g)].map((m) => m[1]);

describe('an opening demonstration that leaves no room for the note on left-out exchanges', () => {
  const range = taskRange(session)!;
  const [demo, issue] = [session[range.first], session[range.last]];
  // After a compaction in an 8k window: the summary, the demonstration, the issue, then the
  // first five steps of the run (the session's own messages up to the sixth answer).
  const summary = summaryMessage(
    '## Goal\n- Make Pixel Representation optional for the NumPy pixel data handler.',
  );
  const steps = session.slice(
    range.last + 1,
    session.findIndex((m) => m.toolCalls?.[0]?.id === 'swe-6'),
  );
  const history: readonly Message[] = deepFreeze([summary, demo, issue, ...steps]);
  const newest = steps.slice(-2);
  // Room for the opening, the newest answer and a cut of its result, but not for a note.
  const budget = est.history([summary, demo, issue, newest[0]]) + 80;
  const fitted = fitToWindow(history, { budgetTokens: budget, limits, policy, estimator: est });
  const request = fitted.messages;
  const gone = steps.filter((m) => m.role === 'tool' && !request.some((r) => r.toolCallId === m.toolCallId));

  it('C1: the request fits, keeps the summary and the issue verbatim, and names every left-out result by recall id', () => {
    expect(steps.filter((m) => m.role === 'tool')).toHaveLength(5);
    expect(est.message(demo)).toBeGreaterThan(4_000);
    expect(fitted.projectedTokens).toBeLessThanOrEqual(budget);
    expect(analyzePairing(request).valid).toBe(true);
    expect(request[0]).toEqual(summary);
    // The user's request stays word for word; the note follows it.
    const task = request.find((m) => textOf(m.content).startsWith(textOf(issue.content)));
    expect(task).toBeDefined();
    expect(gone.length).toBeGreaterThan(0);
    const named = idsIn(textOf(task!.content).slice(textOf(issue.content).length));
    expect(named.filter((id) => id.startsWith('r-'))).toEqual(gone.map(recallIdOf).reverse());
    // Every earlier result is whole in the request, or its recall id is, and recall returns it.
    const shown = request.map((m) => textOf(m.content)).join('\n');
    for (const result of steps.filter((m) => m.role === 'tool')) {
      if (request.includes(result)) continue;
      expect(shown).toContain(recallIdOf(result));
      expect(answerRecall(history, { id: recallIdOf(result) }).text).toBe(textOf(result.content));
    }
    // The newest step is whole.
    expect(request.slice(-2)[0]).toEqual(newest[0]);
  });

  it('C1: the demonstration is cut to its start and end and names its own recall id, which returns it whole', () => {
    const cut = request.find((m) => textOf(m.content).startsWith('Here is a demonstration'));
    expect(cut).toBeDefined();
    const text = textOf(cut!.content);
    expect(est.message(cut!)).toBeLessThan(est.message(demo));
    expect(text).toContain('tokens elided by compactor');
    const id = idsIn(text).at(-1)!;
    expect(id).toBe(recallIdOf(demo));
    expect(text.endsWith(`recall with id ${id} returns it.]`)).toBe(true);
    const answer = answerRecall(history, { id });
    expect(answer).toEqual({ found: true, text: textOf(demo.content) });
    // Asked again while the request holds it whole, recall points there instead.
    expect(answerRecall(history, { id }, history).text).toMatch(
      /already in this conversation, whole, in a user message/,
    );
  });

  it('C1: a little more or less room cuts the demonstration to the same bytes, so the prompt cache keeps the opening', () => {
    for (const delta of [-8, 8, 16]) {
      const other = fitToWindow(history, { budgetTokens: budget + delta, limits, policy, estimator: est });
      expect(other.projectedTokens).toBeLessThanOrEqual(budget + delta);
      expect(other.messages[1]).toEqual(request[1]);
    }
  });

  it('C1: the next steps of the run cut the demonstration to the same bytes while the room stays the same', () => {
    const at = session.indexOf(steps.at(-1)!) + 1;
    for (const more of [2, 4]) {
      const longer = deepFreeze([...history, ...session.slice(at, at + more)]);
      const next = fitToWindow(longer, { budgetTokens: budget, limits, policy, estimator: est });
      expect(next.projectedTokens).toBeLessThanOrEqual(budget);
      expect(next.messages[1]).toEqual(request[1]);
    }
  });
});
