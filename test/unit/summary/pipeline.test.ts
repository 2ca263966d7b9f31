import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { BudgetError } from '#src/core/errors.js';
import type { SummaryClient, SummaryRequest, SummaryResponse } from '#src/providers/types.js';
import {
  boundHistoryForSummary,
  isProtocolValid,
  prepareHierarchicalBands,
  prepareLocalSummary,
  pruneOversizedToolOutputs,
  summaryMessage,
  toSummaryRequest,
} from '#src/summary/index.js';
import { instructionsTokens, previewMessage } from '#src/summary/preview.js';
import { session, turn } from '#support/summary/helpers.js';

afterAll(freeEncoders);
const est = createEstimator();

describe('L2 pruneOversizedToolOutputs', () => {
  it('L2: tool results over 4,096 tokens become head+tail previews within the limit, call ids kept', () => {
    const big = Array.from({ length: 3000 }, (_, i) => `line ${i} of a huge dump`).join('\n');
    const h = [
      msg.user('go'),
      msg.assistant('', [{ id: 'c1', name: 'bash', arguments: '{}' }]),
      msg.tool('c1', big, 'bash'),
    ];
    expect(est.message(h[2])).toBeGreaterThan(4096);
    const out = pruneOversizedToolOutputs(h, est);
    expect(out[2].toolCallId).toBe('c1');
    expect(out[2].toolName).toBe('bash');
    expect(est.message(out[2])).toBeLessThanOrEqual(4096);
    const text = textOf(out[2].content);
    expect(text.startsWith('line 0 of a huge dump')).toBe(true);
    expect(text.endsWith('line 2999 of a huge dump')).toBe(true);
    expect(text).toMatch(/tokens elided by compactor/);
    expect(out[0]).toBe(h[0]);
    expect(isProtocolValid(out)).toBe(true);
  });

  it('L2: small results and non-tool messages are untouched (same array when nothing is pruned)', () => {
    const h = session(2);
    expect(pruneOversizedToolOutputs(h, est)).toBe(h);
    const longUser = [msg.user('x '.repeat(10_000))];
    expect(pruneOversizedToolOutputs(longUser, est)).toBe(longUser);
  });
});

describe('L3 boundHistoryForSummary', () => {
  it('L3: keeps the whole history verbatim when it fits with the instructions', () => {
    const h = session(3);
    const r = boundHistoryForSummary(h, { budget: 100_000, instructionsTokens: 50, estimator: est });
    expect(r.mode).toBe('verbatim');
    expect(r.messages).toEqual(h);
    expect(r.inputTokens).toBe(est.history(h));
  });

  it('L3: selects complete recent groups newest-first and stops at the first that does not fit', () => {
    const h = [...turn('a', 1, 1, 100), ...turn('b', 4, 2, 400), ...turn('c', 1, 1, 100)];
    const c = turn('c', 1, 1, 100);
    const budget = est.history(c) + 30 + 20;
    const r = boundHistoryForSummary(h, { budget, instructionsTokens: 30, estimator: est });
    expect(r.mode).toBe('groups');
    // 'a' would fit on its own but is never skipped to past 'b' (no holes).
    expect(r.messages.map((m) => textOf(m.content))).toEqual(c.map((m) => textOf(m.content)));
    expect(r.inputTokens + 30).toBeLessThanOrEqual(budget);
  });

  it('L3: cuts an unanswered trailing call from the newest group (protocol-valid output)', () => {
    const h = [
      ...turn('a', 1, 1, 50),
      msg.user('next'),
      msg.assistant('', [{ id: 'x', name: 'bash', arguments: '{}' }]),
    ];
    const r = boundHistoryForSummary(h, { budget: 5_000, instructionsTokens: 10, estimator: est });
    expect(isProtocolValid(r.messages)).toBe(true);
    expect(r.messages[r.messages.length - 1]).toEqual(msg.user('next'));
  });

  it('L3: a small newest group does not starve the fork: the older group that does not fit whole goes in as bounded previews', () => {
    // A fresh "continue" after a long task: the task group is far over the allowance.
    const task = turn('task', 40, 2, 1_500);
    const h = [msg.system('You are an agent.'), ...turn('old', 1, 1, 100), ...task, msg.user('continue')];
    const budget = 3_000;
    const r = boundHistoryForSummary(h, { budget, instructionsTokens: 100, estimator: est });
    expect(r.mode).toBe('previews');
    expect(r.inputTokens + 100).toBeLessThanOrEqual(budget);
    expect(isProtocolValid(r.messages)).toBe(true);
    expect(r.messages[r.messages.length - 1]).toEqual(msg.user('continue'));
    // The task group is covered (its anchor and its newest batch, call ids kept), so the
    // fork is not just the 4-token "continue"; the group before it is never skipped to.
    const texts = r.messages.map((m) => textOf(m.content));
    expect(texts.some((t) => t.startsWith('task task'))).toBe(true);
    expect(r.messages.some((m) => m.toolCallId === 'task-39-1')).toBe(true);
    expect(texts.some((t) => t.startsWith('task old'))).toBe(false);
    expect(r.inputTokens).toBeGreaterThan((budget - 100) / 2);
  });

  it('L3/§14: an earlier summary is pinned at the head of the fork, however much came after it', () => {
    const earlier = summaryMessage('## Goal\n- Keep the v1 API. Do not touch setup.cfg.');
    const h = [msg.system('You are an agent.'), earlier, ...turn('new', 40, 2, 1_500)];
    const r = boundHistoryForSummary(h, { budget: 3_000, instructionsTokens: 100, estimator: est });
    expect(r.messages[0]).toBe(earlier);
    expect(isProtocolValid(r.messages)).toBe(true);
    expect(r.inputTokens + 100).toBeLessThanOrEqual(3_000);
    expect(r.messages.some((m) => m.toolCallId === 'new-39-1')).toBe(true);
  });

  it('L3: a preview is measured at its real size (the aggregate check sees what is sent)', () => {
    const m = msg.tool('c1', 'output line '.repeat(2_000), 'bash');
    const p = previewMessage(m, 200, est);
    const fresh = createEstimator();
    expect(est.message(p)).toBe(fresh.message(JSON.parse(JSON.stringify(p)) as Message));
    expect(est.message(p)).toBeGreaterThan(150);
    expect(est.message(p)).toBeLessThanOrEqual(200);
  });

  it('L3: falls back to bounded previews when not even the newest group fits', () => {
    const h = turn('solo', 3, 2, 4000);
    const budget = 1_500;
    const r = boundHistoryForSummary(h, { budget, instructionsTokens: 100, estimator: est });
    expect(r.mode).toBe('previews');
    expect(r.inputTokens + 100).toBeLessThanOrEqual(budget);
    expect(isProtocolValid(r.messages)).toBe(true);
    expect(r.messages[0].role).toBe('user');
  });

  it('L3: an impossible input throws BudgetError naming the allowance, before any provider call', () => {
    // A user message answered by one batch of five calls: its protocol skeleton alone
    // (ids, names, per-message and per-call overhead) exceeds the allowance.
    const h = turn('a', 1, 5, 100).slice(0, -1);
    let calls = 0;
    const client: SummaryClient = {
      provider: 'rec',
      model: 'm',
      summarize: async () => {
        calls++;
        return { text: 'x', finishReason: 'stop' };
      },
    };
    const attempt = async () => {
      const p = prepareLocalSummary(h, { budget: 60, estimator: est, instructions: 'summarize' });
      await client.summarize(toSummaryRequest(p, { model: 'm' }));
    };
    return expect(attempt())
      .rejects.toThrow(/summary input budget needs \d+ tokens but only 60 are available/)
      .then(() => expect(calls).toBe(0));
  });

  it('L3: instructions alone over the allowance name the instructions', () => {
    expect(() =>
      boundHistoryForSummary(session(1), { budget: 10, instructionsTokens: 50, estimator: est }),
    ).toThrow(/instructions alone/);
  });

  it('L3 property: any bounded fork is protocol-valid and within budget (per-message overhead included)', () => {
    const arb = fc.record({
      turns: fc.array(
        fc.record({
          batches: fc.integer({ min: 0, max: 3 }),
          width: fc.integer({ min: 1, max: 3 }),
          size: fc.integer({ min: 1, max: 3000 }),
        }),
        { minLength: 1, maxLength: 5 },
      ),
      budget: fc.integer({ min: 40, max: 8000 }),
      dangling: fc.boolean(),
    });
    fc.assert(
      fc.property(arb, ({ turns, budget, dangling }) => {
        const h: Message[] = turns.flatMap((t, i) => turn(`p${i}`, t.batches, t.width, t.size));
        if (dangling) h.push(msg.assistant('', [{ id: 'dangle', name: 'bash', arguments: '{}' }]));
        try {
          const r = boundHistoryForSummary(h, { budget, instructionsTokens: 20, estimator: est });
          expect(isProtocolValid(r.messages)).toBe(true);
          expect(est.history(r.messages) + 20).toBeLessThanOrEqual(budget);
          expect(r.messages.length).toBeGreaterThan(0);
        } catch (e) {
          expect(e).toBeInstanceOf(BudgetError);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('L1 prepareLocalSummary', () => {
  it('L1: unknown budget sends the first fork verbatim, but still pruned (L2)', () => {
    const big = 'y '.repeat(20_000);
    const h = [
      msg.user('go'),
      msg.assistant('', [{ id: 'c', name: 'bash', arguments: '{}' }]),
      msg.tool('c', big),
    ];
    const p = prepareLocalSummary(h, { budget: null, estimator: est, instructions: 'summarize' });
    expect(p.fork).toHaveLength(3);
    expect(p.fork[0]).toBe(h[0]);
    expect(est.message(p.fork[2])).toBeLessThanOrEqual(4096);
    expect(p.instructionsTokens).toBe(instructionsTokens('summarize', est));
    expect(p.budget).toBeNull();
  });

  it('L1: the instructions consume the allowance', () => {
    const h = session(4);
    const total = est.history(h.slice(1));
    const instr = 'i '.repeat(200);
    const fits = prepareLocalSummary(h, { budget: total + 10, estimator: est, instructions: 'short' });
    const cut = prepareLocalSummary(h, { budget: total + 10, estimator: est, instructions: instr });
    expect(fits.omittedMessages).toBe(1); // only the system prompt
    expect(cut.inputTokens).toBeLessThan(fits.inputTokens);
    expect(cut.inputTokens + cut.instructionsTokens).toBeLessThanOrEqual(total + 10);
  });

  it('L1: a message sent while a tool ran does not cut the fork there: every earlier group still goes in', () => {
    const h = [...session(3)];
    // A user message between the newest-but-one batch's call and its result.
    const at = h.findIndex((m, i) => i > 2 && m.role === 'tool');
    h.splice(at, 0, msg.user('also check the lockfile'));
    const p = prepareLocalSummary(h, { budget: 1_000_000, estimator: est, instructions: 'summarize' });
    expect(isProtocolValid(p.fork)).toBe(true);
    const users = (ms: readonly Message[]) =>
      ms.filter((m) => m.role === 'user' && m.toolCallId === undefined);
    expect(users(p.fork).map((m) => textOf(m.content))).toEqual(users(h).map((m) => textOf(m.content)));
    const results = (ms: readonly Message[]) => ms.filter((m) => m.role === 'tool').length;
    expect(results(p.fork)).toBe(results(h));
  });
});

describe('L4 prepareHierarchicalBands', () => {
  it('L4: a single-task session (one user message) gets both bands: they cover everything the tail does not keep verbatim, split at batch boundaries', () => {
    const h = [msg.system('You are an agent.'), ...turn('solo', 24, 2, 600)];
    const bands = prepareHierarchicalBands(h, {
      budget: null,
      estimator: est,
      instructions: 'detail please',
      continuityTailTokens: 1_500,
    });
    expect(bands.abstract.fork.length).toBeGreaterThan(0);
    expect(bands.detail.fork.length).toBeGreaterThan(0);
    for (const f of [bands.abstract.fork, bands.detail.fork, bands.tail])
      expect(isProtocolValid(f)).toBe(true);
    // The older band starts at the task; the newer band runs up to the tail's first verbatim batch.
    expect(textOf(bands.abstract.fork[1].content)).toMatch(/^task solo/);
    const ids = (ms: readonly Message[]) => ms.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
    const covered = [...ids(bands.abstract.fork), ...ids(bands.detail.fork), ...ids(bands.tail)];
    expect(new Set(covered)).toEqual(new Set(ids(h)));
    expect(ids(bands.detail.fork).some((id) => ids(bands.tail).includes(id))).toBe(false);
    expect(ids(bands.abstract.fork).some((id) => ids(bands.detail.fork).includes(id))).toBe(false);
  });

  it('L4: prepares both bands (no batch split) and an impossible band fails with zero calls', () => {
    const h = session(9, 2, 2, 300);
    const bands = prepareHierarchicalBands(h, {
      budget: 50_000,
      estimator: est,
      instructions: 'detail please',
      continuityTailTokens: 1_500,
    });
    expect(bands.abstract.fork.length).toBeGreaterThan(0);
    expect(bands.detail.fork.length).toBeGreaterThan(0);
    expect(bands.abstract.maxOutputTokens).toBe(150);
    for (const f of [bands.abstract.fork, bands.detail.fork, bands.retainFrom, bands.tail])
      expect(isProtocolValid(f)).toBe(true);

    const seen: SummaryRequest[] = [];
    const record = async (r: SummaryRequest): Promise<SummaryResponse> => {
      seen.push(r);
      return { text: 'x', finishReason: 'stop' };
    };
    const run = async () => {
      const b = prepareHierarchicalBands(h, {
        budget: 80,
        estimator: est,
        instructions: 'd '.repeat(60),
        continuityTailTokens: 1_500,
      });
      await record(toSummaryRequest(b.abstract, { model: 'm' }));
      await record(toSummaryRequest(b.detail, { model: 'm' }));
    };
    return expect(run())
      .rejects.toBeInstanceOf(BudgetError)
      .then(() => expect(seen).toHaveLength(0));
  });
});
