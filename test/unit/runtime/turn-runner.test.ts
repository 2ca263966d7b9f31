import { describe, expect, it } from '@jest/globals';
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg, type Message } from '#src/messages/message.js';
import type { NativeInlineClient } from '#src/providers/types.js';
import { resolveBudgets } from '#src/projection/index.js';
import type { SummaryClient } from '#src/providers/types.js';
import {
  createJsonlInspector,
  createLocalSummarizer,
  createTurnRunner,
  resolveRunConfig,
  type TurnRunnerDeps,
} from '#src/runtime/index.js';
import { deferred, settle } from '#support/deferred.js';
import { estimator, FakeSummarizer } from '#support/runtime/fake-summarizer.js';

// capacity 2,000 − reserved 200 → compaction threshold 1,350 (75 %), clearing trigger 1,080 (3/5 of the budget).
const limits = { capacity: 2_000, reservedOutput: 200 };

/** A session with `rounds` tool batches whose results are large (clearable) and chatty user turns. */
function session(rounds: number): Message[] {
  const h: Message[] = [msg.system('You are a coding agent.')];
  for (let i = 0; i < rounds; i++) {
    h.push(msg.user(`Step ${i}: ${'please look at the repository layout and explain it. '.repeat(4)}`));
    h.push(
      msg.assistant('', [
        { id: `call_${i}`, name: 'read_file', arguments: JSON.stringify({ path: `src/f${i}.ts` }) },
      ]),
    );
    h.push(
      msg.tool(
        `call_${i}`,
        `export const v${i} = 1;\n${'// filler line of source code\n'.repeat(20)}`,
        'read_file',
      ),
    );
  }
  return h;
}

// The VT Code preset: these tests check clearing and compaction at the default threshold (VT Code's numbers).
const policy = { preset: 'vtcode' } as const;

function runner(summarizer: FakeSummarizer, extra: Partial<TurnRunnerDeps> = {}) {
  return createTurnRunner({
    estimator,
    config: resolveRunConfig({ limits, policy }),
    compaction: { summarizer },
    ...extra,
  });
}

describe('turn runner with the real projection functions', () => {
  it('H2/H6: below the threshold no summary call is made and the history is not copied', async () => {
    const s = new FakeSummarizer();
    const history = session(2);
    const result = await runner(s).runTurn({ turnId: 't1', history });
    expect(result.decision).toBe('below-threshold');
    expect(result.summaryCalls).toBe(0);
    expect(s.requests).toHaveLength(0);
    expect(s.prepared).toHaveLength(0);
    expect(result.history).toBe(history);
    expect(result.loopGuard).toEqual({
      consecutiveFailures: 0,
      lastFreedRatio: null,
      turnsSinceCompaction: null,
    });
  });

  it('H1/H3: compaction receives the FULL synced history, not the cleared projection; the projection is rebuilt', async () => {
    const s = new FakeSummarizer();
    const history = session(10);
    const pending = [msg.user('And now fix the bug in f9.')];
    const result = await runner(s).runTurn({ turnId: 't2', history, pending });
    expect(result.decision).toBe('compacted');
    expect(result.tokens.afterClearing!).toBeLessThan(result.tokens.beforeClearing!); // clearing ran
    expect(s.prepared[0]!.history).toEqual([...history, ...pending]);
    expect(result.summaryCalls).toBe(1);
    expect(result.items).toEqual({ before: history.length + 1, after: 3 });
    expect(result.history[0]!.content).toContain('Previous conversation summary');
    expect(result.request![0]).toBe(result.history[0]); // projection rebuilt from the new history
    expect(result.tokens.afterCompaction!).toBeLessThan(result.tokens.afterClearing!);
    expect(result.compaction).toMatchObject({
      status: 'compacted',
      strategy: 'local',
      mode: 'automatic',
      itemsAfter: 3,
    });
    expect(result.loopGuard.consecutiveFailures).toBe(0);
    expect(result.loopGuard.lastFreedRatio!).toBeGreaterThan(0.5);
  });

  it('H3/L6: a failed compaction (empty summary) keeps the history and the existing projection', async () => {
    const s = new FakeSummarizer();
    s.reply = () => '   ';
    const history = session(10);
    const result = await runner(s).runTurn({ turnId: 't3', history });
    expect(result.decision).toBe('failed');
    expect(result.compaction?.failure).toEqual(
      expect.objectContaining({ reason: 'empty-summary', message: 'provider returned an empty summary' }),
    );
    expect(result.history).toBe(history);
    expect(result.request).not.toBeNull();
    expect(result.request!.length).toBe(history.length); // the cleared projection, not a rebuilt one
    expect(result.request).not.toEqual(history); // clearing stubs are still in place
    expect(result.loopGuard.consecutiveFailures).toBe(1);
  });

  it('L6: an empty summary from a real summarizer (EmptySummaryError from its request) fails as empty-summary with route details, not provider-error', async () => {
    const client: SummaryClient = {
      provider: 'rec',
      model: 'blank-1',
      summarize: () => Promise.resolve({ text: '  ', finishReason: 'stop' }),
    };
    const summarizer = createLocalSummarizer({
      client,
      estimator,
      budgets: resolveBudgets(limits),
      reinjectBudgetTokens: 0,
    });
    const history = session(10);
    const result = await createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits, policy }),
      compaction: { summarizer },
    }).runTurn({
      turnId: 't-empty',
      history,
    });
    expect(result.decision).toBe('failed');
    expect(result.summaryCalls).toBe(1);
    const failure = result.compaction?.failure;
    expect(failure?.reason).toBe('empty-summary');
    expect(failure?.message).toContain('provider returned an empty summary');
    expect(failure?.message).toMatch(/rec \/ blank-1 \(input_tokens=\d+, budget=\d+\)/);
    expect(result.history).toBe(history);
  });

  it('§14: a template-less summary gets one repair request, counted by the machine among the summary calls', async () => {
    const s = new FakeSummarizer();
    let answers = 0;
    s.reply = (fork) => (answers++ === 0 ? 'ok' : `## Summary\n${fork.messages.length} messages summarized.`);
    const result = await runner(s).runTurn({ turnId: 't4', history: session(10) });
    expect(s.requests).toHaveLength(2);
    expect(result.decision).toBe('compacted');
    expect(result.summaryCalls).toBe(2);
    expect(result.compaction?.repairRequests).toBe(1);
  });

  it('L5: a capacity rejection halves the budget once, then stops (maxOverflowRetries 1)', async () => {
    const s = new FakeSummarizer();
    s.capacity = 10; // every fork is rejected
    const result = await runner(s).runTurn({ turnId: 't5', history: session(10) });
    expect(result.decision).toBe('failed');
    expect(s.requests.map((r) => r.budget)).toHaveLength(2);
    const [first, second] = s.requests.map((r) => r.budget!);
    expect(second).toBe(Math.floor(first! / 2));
    expect(result.summaryCalls).toBe(2);
    expect(result.compaction?.failure?.reason).toBe('capacity-exhausted');
  });

  it('L5: the retry succeeds when the halved fork fits', async () => {
    const s = new FakeSummarizer();
    const history = session(10);
    s.capacity = 600; // the first fork (~1,200 tokens) is rejected, the halved one (~500) fits
    const result = await runner(s).runTurn({ turnId: 't6', history });
    expect(s.requests.length).toBe(2);
    expect(s.requests[1]!.inputTokens).toBeLessThan(s.requests[0]!.inputTokens);
    expect(result.decision).toBe('compacted');
  });

  it('§14: the loop guard skips automatic compaction after 2 consecutive failures, and says why', async () => {
    const s = new FakeSummarizer();
    const result = await runner(s).runTurn({
      turnId: 't7',
      history: session(10),
      loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
    });
    expect(result.decision).toBe('guarded');
    expect(result.guardReason).toBe('repeated-failures');
    expect(s.requests).toHaveLength(0);
  });

  it('S1/A4: at a 2,000-token window the inline request stays under the compact trigger: no inline call, Local compacts', async () => {
    const s = new FakeSummarizer();
    let inlineCalls = 0;
    const inline: NativeInlineClient = {
      provider: 'anthropic',
      model: 'claude-opus-4-5',
      compactInline: async () => {
        inlineCalls++;
        return { kind: 'fallback', reason: 'null-content' };
      },
    };
    const result = await runner(s, {
      strategy: 'nativeInline',
      compaction: { summarizer: s, inline },
    }).runTurn({
      turnId: 't8',
      history: session(10),
    });
    expect(result.decision).toBe('compacted');
    expect(result.strategy).toBe('local');
    expect(result.fallbackReason).toBe('below-trigger');
    expect(inlineCalls).toBe(0);
    expect(result.summaryCalls).toBe(1);
  });

  it('S1: a native strategy whose client the route lacks runs Local; the machine reports why (no-client)', async () => {
    const s = new FakeSummarizer();
    const history = session(3);
    const report = await runner(s, {
      strategy: 'nativeStandalone',
      compaction: { summarizer: s },
    }).runCompaction({ turnId: 'nc1', history });
    expect(report).toMatchObject({
      status: 'compacted',
      requestedStrategy: 'nativeStandalone',
      strategy: 'local',
      fallbackReason: 'no-client',
      summaryCalls: 1,
    });
    expect(s.requests).toHaveLength(1);
  });

  it('S3: manual /compact always summarizes, even far below the threshold', async () => {
    const s = new FakeSummarizer();
    const history = session(3);
    // A clock that moves 1,250 ms per reading: the pass reads it when it starts and ends.
    let now = 0;
    const clock = { now: () => (now += 1_250) };
    const report = await runner(s, { clock }).runCompaction({ turnId: 'm1', history });
    expect(report).toMatchObject({
      status: 'compacted',
      mode: 'manual',
      itemsBefore: 10,
      itemsAfter: 3,
      summaryCalls: 1,
    });
    expect(report.elapsedMs).toBe(1_250);
  });

  it('cancellation aborts the in-flight summary call through the nested machines', async () => {
    const s = new FakeSummarizer();
    const gate = deferred<void>();
    s.gate = gate.promise;
    const controller = new AbortController();
    const pending = runner(s).runTurn({ turnId: 't9', history: session(10) }, { signal: controller.signal });
    while (s.requests.length === 0) await settle();
    controller.abort();
    const result = await pending;
    expect(result.decision).toBe('cancelled');
    expect(s.requests[0]!.signal.aborted).toBe(true);
    expect(result.history.length).toBe(31);
  });

  it('R2/persistence: a checkpoint taken mid-summary resumes to the same outcome; the in-flight call runs again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-turn-'));
    const live = join(dir, 'turn.json');
    const crashed = join(dir, 'crashed.json');
    const lines: string[] = [];
    const s1 = new FakeSummarizer();
    const gate = deferred<void>();
    s1.gate = gate.promise;
    const controller = new AbortController();
    const first = runner(s1, { inspect: createJsonlInspector((l) => lines.push(l)) }).runTurn(
      { turnId: 't10', history: session(10) },
      { signal: controller.signal, checkpointPath: live },
    );
    while (s1.requests.length === 0) await settle();
    while (!existsSync(live)) await settle(); // written without blocking the turn
    copyFileSync(live, crashed); // the process "dies" here
    controller.abort();
    await first;

    expect(JSON.parse(readFileSync(crashed, 'utf8')).snapshot.status).toBe('active');
    const s2 = new FakeSummarizer();
    const resumed = await runner(s2).resumeTurn(crashed, { history: session(10) });
    const straight = await runner(new FakeSummarizer()).runTurn({ turnId: 't10', history: session(10) });
    expect(s2.requests).toHaveLength(1); // requestSummary was re-invoked after the restore
    expect(resumed.decision).toBe('compacted');
    expect(resumed.history).toEqual(straight.history);
    expect(resumed.items).toEqual(straight.items);
    // Inspection JSONL: one record per line, message arrays never inlined.
    const records = lines.map((l) => JSON.parse(l) as { type: string; actor: string });
    expect(new Set(records.map((r) => r.type))).toEqual(
      new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot']),
    );
    expect(records.filter((r) => r.type === '@xstate.actor' && r.actor === 'requestSummary')).toHaveLength(1);
    expect(lines.join('\n')).not.toContain('filler line of source code');
  });
});
