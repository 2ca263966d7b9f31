import { describe, it, expect } from '@jest/globals';
import { textOf, type Message } from '#src/messages/message.js';
import { isRequestHistoryValid } from '#src/projection/normalize.js';
import { compactorPolicy, compactorVtcodePolicy, noClearingPolicy } from '#dev/replay/policies/index.js';
import { replaySession, turnIndices } from '#dev/replay/replay.js';
import { createCompactorSession } from '#src/session/index.js';
import { createOfflineSummarizer } from '#src/summary/offline/offline-summarizer.js';
import { fastEstimator, readSession } from '#support/replay/helpers.js';

/** A session whose final answer uses an identifier from every result (so every result is needed there). */
function sessionNeedingAll(batches: number): Message[] {
  let b = 0;
  const s = readSession(batches).map((m) =>
    m.role === 'tool' ? { ...m, content: `const valueOf${b++} = load();\n${textOf(m.content)}` } : m,
  );
  s[s.length - 1] = {
    role: 'assistant',
    content: Array.from({ length: batches }, (_, k) => `valueOf${k}`).join(' '),
  };
  return s;
}

describe('replaySession (H1–H3 replay, §14 retention)', () => {
  it('H1: a turn is each assistant message; the request holds everything recorded before it', async () => {
    const s = readSession(3);
    expect(turnIndices(s)).toEqual([2, 4, 6, 8]);
    const seen: number[] = [];
    await replaySession(s, {
      policy: noClearingPolicy,
      limits: { capacity: 128_000 },
      estimator: fastEstimator(),
      onRequest: (t, req) => seen.push(t === req.length ? 1 : 0),
    });
    expect(seen).toEqual([1, 1, 1, 1]);
  });
  it('§14 cost: a request reads from the cache only what the previous request sent (policies that return the live history too)', async () => {
    const s = readSession(3);
    const est = fastEstimator();
    const r = await replaySession(s, {
      policy: noClearingPolicy,
      limits: { capacity: 128_000 },
      estimator: est,
    });
    expect(r.turns[0].prefixTokens).toBe(0);
    for (let i = 1; i < r.turns.length; i++) {
      // Everything sent before is cached; the messages added since are not.
      expect(r.turns[i].prefixTokens).toBe(r.turns[i - 1].projectedTokens);
      expect(r.turns[i].prefixTokens).toBeLessThan(r.turns[i].projectedTokens);
    }
  });
  it('§14: without clearing every needed result is present; clearing at a small window loses some and stays valid', async () => {
    const s = sessionNeedingAll(40);
    const est = fastEstimator();
    const full = await replaySession(s, {
      policy: noClearingPolicy,
      limits: { capacity: 1_000_000 },
      estimator: est,
    });
    expect(full.totals.needed).toBe(40);
    expect(full.totals.present).toBe(40);
    const cleared = await replaySession(s, {
      policy: compactorVtcodePolicy(),
      limits: { capacity: 24_000, reservedOutput: 4_000 },
      estimator: est,
    });
    expect(cleared.totals.present).toBeLessThan(40);
    expect(cleared.totals.rereadTokens).toBeGreaterThan(0);
    expect(cleared.totals.invalidRequests).toBe(0);
    expect(cleared.totals.requestTokens).toBeLessThan(full.totals.requestTokens);
  });
  it('H2/H3: pressure at the compaction threshold triggers a summary call and the request is rebuilt under it', async () => {
    const s = readSession(40);
    const requests: Array<readonly Message[]> = [];
    const r = await replaySession(s, {
      policy: noClearingPolicy,
      limits: { capacity: 16_000, reservedOutput: 2_000 },
      estimator: fastEstimator(),
      onRequest: (_, req) => requests.push(req),
    });
    expect(r.totals.summaryCalls).toBeGreaterThan(0);
    expect(r.totals.summaryInputTokens).toBeGreaterThan(0);
    expect(requests.every((q) => isRequestHistoryValid(q))).toBe(true);
    const threshold = r.budgets.compactionThreshold ?? 0;
    expect(r.turns.filter((t) => t.summaryCalls > 0).every((t) => t.projectedTokens < threshold)).toBe(true);
  });
  it('§14: a summary that restates a long task keeps it; a policy that drops the task message without a summary loses it', async () => {
    // A task too long to stay verbatim in an 8k window once the history is summarized.
    const verbatim: boolean[] = [];
    const base = readSession(40);
    const task = base.findIndex((m) => m.role === 'user');
    const long =
      'Fix the flaky parser. ' + 'It drops trailing comments in nested blocks on long input. '.repeat(120);
    const s = base.map((m, i) => (i === task ? { ...m, content: long } : m));
    const summarized = await replaySession(s, {
      policy: noClearingPolicy,
      limits: { capacity: 8_000, reservedOutput: 1_000 },
      estimator: fastEstimator(),
      onRequest: (t, req) => {
        if (t > task) verbatim.push(req.some((m) => textOf(m.content) === long));
      },
    });
    expect(summarized.totals.summaryCalls).toBeGreaterThan(0);
    expect(verbatim).toContain(false);
    expect(summarized.totals.taskLostTurns).toBe(0);
    // A policy that leaves the task message out and has no summary to restate it loses it every turn.
    const dropped = await replaySession(s, {
      policy: {
        name: 'drop-task',
        description: 'leaves the task message out',
        source: 'baseline',
        project: async (history) => history.filter((_, i) => i !== task),
      },
      limits: { capacity: 1_000_000 },
      estimator: fastEstimator(),
    });
    expect(dropped.totals.taskLostTurns).toBe(dropped.turns.length);
  });
  it('H3: a Compactor setting replays through the session API: every request is the one createCompactorSession sends for the same steps', async () => {
    const s = readSession(60);
    const est = fastEstimator();
    const limits = { capacity: 16_000, reservedOutput: 2_000 };
    const replayed: Array<readonly Message[]> = [];
    const r = await replaySession(s, {
      policy: compactorPolicy(),
      limits,
      estimator: est,
      onRequest: (_, req) => replayed.push(req),
    });
    expect(r.totals.summaryCalls).toBeGreaterThan(0);

    // As the replay opens it: summaries by the agent's own model, over the last request sent.
    const summarizer = createOfflineSummarizer({ estimator: est });
    const session = createCompactorSession({ limits, estimator: est, summarizer });
    session.setEnvelope({ provider: 'replay', model: summarizer.model });
    const sent: Array<readonly Message[]> = [];
    let calls = 0;
    let next = 0;
    for (const t of turnIndices(s)) {
      const turn = await session.runTurn({ pending: s.slice(next, t) });
      next = t;
      sent.push(turn.request ?? []);
      calls += turn.summaryCalls;
    }
    session.close();
    expect(replayed).toEqual(sent);
    expect(r.totals.summaryCalls).toBe(calls);
  });
});
