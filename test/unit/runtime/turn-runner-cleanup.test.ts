import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg, type Message } from '#src/messages/message.js';
import { createTurnRunner, resolveRunConfig } from '#src/runtime/index.js';
import { deferred, settle } from '#support/deferred.js';
import { estimator, FakeSummarizer } from '#support/runtime/fake-summarizer.js';

// capacity 2,000 − reserved 200 → compaction threshold 1,350 (75 %).
const limits = { capacity: 2_000, reservedOutput: 200 };

/** Enough large tool batches that the turn must compact (pressure over the threshold). */
function session(rounds: number): Message[] {
  const h: Message[] = [msg.system('You are a coding agent.')];
  for (let i = 0; i < rounds; i++) {
    h.push(msg.user(`Step ${i}: ${'please look at the repository layout and explain it. '.repeat(4)}`));
    h.push(msg.assistant('', [{ id: `call_${i}`, name: 'read_file', arguments: '{}' }]));
    h.push(msg.tool(`call_${i}`, `${'// filler line of source code\n'.repeat(20)}`, 'read_file'));
  }
  return h;
}

describe('turn runner releases the turn when a checkpoint cannot be written', () => {
  it('R2: a failing checkpoint write rejects the run and stops the turn (no summary call keeps running)', async () => {
    const s = new FakeSummarizer();
    const gate = deferred<void>();
    s.gate = gate.promise;
    // A window this small leaves a pass little room, so the defaults would clear instead of compacting.
    const policy = { clearWhenPassBuysFewerTurns: 0 };
    const runner = createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits, policy }),
      compaction: { summarizer: s },
    });
    // The directory does not exist, so every checkpoint write fails.
    const checkpointPath = join(mkdtempSync(join(tmpdir(), 'compactor-ckpt-')), 'missing', 'turn.json');
    const controller = new AbortController();
    await expect(
      runner.runTurn({ turnId: 't1', history: session(10) }, { checkpointPath, signal: controller.signal }),
    ).rejects.toThrow(/ENOENT|no such file/);
    for (let i = 0; i < 10; i++) await settle();
    // Either the turn never reached the provider call, or that call's signal was aborted.
    expect(s.requests.every((r) => r.signal.aborted)).toBe(true);
    gate.resolve();
  });
});

describe("turn runner and the caller's signal", () => {
  const runner = () =>
    createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits }),
      compaction: { summarizer: new FakeSummarizer() },
    });

  it('a turn whose steps all compute at once leaves no listener on the signal it was given', async () => {
    const controller = new AbortController();
    const r = runner();
    for (let i = 0; i < 3; i++) {
      const result = await r.runTurn({ turnId: `t${i}`, history: session(1) }, { signal: controller.signal });
      expect(result.decision).toBe('below-threshold');
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a turn given a signal already aborted ends cancelled, before any step', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runner().runTurn(
      { turnId: 't1', history: session(1) },
      { signal: controller.signal },
    );
    expect(result.decision).toBe('cancelled');
    expect(result.request).toBeNull();
  });
});
