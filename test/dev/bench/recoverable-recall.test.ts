import { afterAll, describe, expect, it } from '@jest/globals';
import { loadCorpusSessions } from '#dev/bench/corpus-sessions.js';
import { recoverableRecallSection } from '#dev/bench/recoverable-recall-section.js';
import { runWindow, windowLimits } from '#dev/bench/retention-runs.js';
import { productDriver } from '#dev/replay/drivers.js';
import { compactorPolicy } from '#dev/replay/policies/index.js';
import { replaySession, turnIndices } from '#dev/replay/replay.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { taskRange, textOf, type Message } from '#src/messages/message.js';
import { resolveBudgets } from '#src/projection/budgets.js';
import { rawDir } from '#support/paths.js';

afterAll(freeEncoders);

describe('recoverable recall: every needed result is in the request or a recall away', () => {
  it('§14: at 8k the defaults keep every needed result of three real sessions recoverable, summarized ones through pointer lines and span lists', async () => {
    const sessions = loadCorpusSessions(rawDir).sessions.filter((s) =>
      /^(?:sphinx-doc__sphinx-9258|sympy__sympy-13091|django__django-16560)/.test(s.name),
    );
    expect(sessions).toHaveLength(3);
    const [run] = await runWindow(sessions, 8_000, [compactorPolicy()], createEstimator());
    expect(run.failures).toEqual([]);
    const t = run.totals;
    // Compaction ran and took needed results out of the request.
    expect(t.summaryCalls).toBeGreaterThan(0);
    expect(t.needed - t.present).toBeGreaterThan(10);
    // Every one of them comes back through the product's own recall.
    expect(t.recoverable).toBe(t.needed);
    // Some only through a summary's span list: their own id was not on a pointer line.
    expect(t.viaSpan).toBeGreaterThan(0);
    expect(t.recallCalls).toBeGreaterThanOrEqual(t.needed - t.present + t.viaSpan);
    const section = recoverableRecallSection(new Map([[8_000, [run]]]));
    expect(section.rows[0].slice(0, 4)).toEqual(['8k', 'compactor', t.needed, '100.0%']);
  });

  it('§14: at 8k a SWE-agent run that opens with a 4,800-token demonstration keeps its issue verbatim, every request inside the window, every needed result recoverable and the demonstration a recall away', async () => {
    const [session] = loadCorpusSessions(rawDir).sessions.filter((s) =>
      s.name.startsWith('gpt4__pydicom__pydicom-1458'),
    );
    const est = createEstimator();
    const limits = windowLimits(8_000);
    const requests: Array<readonly Message[]> = [];
    const replay = await replaySession(session.messages, {
      policy: compactorPolicy(),
      limits,
      estimator: est,
      needs: session.needs,
      onRequest: (_, request) => requests.push(request),
    });
    const t = replay.totals;
    expect(t.summaryCalls).toBeGreaterThan(0);
    // Needed results were left out of requests, and each has its id (or a span's) in view.
    expect(t.needed - t.present).toBeGreaterThan(0);
    expect(t.recoverable).toBe(t.needed);
    expect(t.taskLostTurns).toBe(0);
    const budget = resolveBudgets(limits).historyBudget ?? 0;
    for (const turn of replay.turns) expect(turn.projectedTokens).toBeLessThanOrEqual(budget);
    const range = taskRange(session.messages)!;
    const [demo, issue] = [session.messages[range.first], session.messages[range.last]];
    expect(est.message(demo)).toBeGreaterThan(4_000);
    for (const request of requests)
      expect(request.some((m) => textOf(m.content).startsWith(textOf(issue.content)))).toBe(true);

    // The cut demonstration names the original's recall id, and the session's recall returns it whole.
    const driver = productDriver({}, { limits, estimator: est });
    let next = 0;
    let last: readonly Message[] = [];
    for (const turn of turnIndices(session.messages)) {
      last = (await driver.turn(session.messages.slice(next, turn))).request;
      next = turn;
    }
    const cut = last.find((m) => textOf(m.content).startsWith('Here is a demonstration'));
    const id = /recall with id (r-[0-9a-f]{8}) returns it\.\]$/.exec(textOf(cut?.content ?? ''))?.[1];
    expect(id).toBeDefined();
    expect(driver.recall({ id }, last)).toBe(textOf(demo.content));
    driver.close();
  });
});
