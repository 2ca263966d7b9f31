import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '#src/core/errors.js';
import { msg, type Message } from '#src/messages/message.js';
import { createTurnRunner, resolveRunConfig, RefCheckpointSchema } from '#src/runtime/index.js';
import { decodeList } from '#src/runtime/checkpoint-refs.js';
import { decodeWritten } from '#src/runtime/checkpoint-written.js';
import { deferred, settle } from '#support/deferred.js';
import { estimator, FakeSummarizer } from '#support/runtime/fake-summarizer.js';

const limits = { capacity: 2_000, reservedOutput: 200 };
// A window this small leaves a pass little room, so the defaults would clear instead of calling the summarizer.
const policy = { clearWhenPassBuysFewerTurns: 0 };
const runner = (s = new FakeSummarizer()) =>
  createTurnRunner({
    estimator,
    config: resolveRunConfig({ limits, policy }),
    compaction: { summarizer: s },
  });

function session(rounds: number): Message[] {
  const h: Message[] = [msg.system('You are a coding agent.')];
  for (let i = 0; i < rounds; i++)
    h.push(
      msg.user(`Step ${i}: ${'please look at the repository layout and explain it. '.repeat(4)}`),
      msg.assistant('', [{ id: `c${i}`, name: 'read_file', arguments: '{}' }]),
      msg.tool(`c${i}`, `export const v${i} = 1;\n${'// filler line\n'.repeat(20)}`, 'read_file'),
    );
  return h;
}

/** The checkpoint file as it stands while the summary call is in flight. */
async function midSummary(dir: string, history: readonly Message[]): Promise<unknown> {
  const live = join(dir, 'turn.json');
  const s = new FakeSummarizer();
  s.gate = deferred<void>().promise;
  const controller = new AbortController();
  const run = runner(s).runTurn(
    { turnId: 't1', history },
    { signal: controller.signal, checkpointPath: live },
  );
  while (s.requests.length === 0) await settle();
  while (!existsSync(live)) await settle(); // written without blocking the turn
  const json: unknown = JSON.parse(readFileSync(live, 'utf8'));
  controller.abort();
  await run;
  return json;
}

describe('turn checkpoints hold references, not the conversation (R2)', () => {
  it('R2: the checkpoint refers to the history by runs and holds none of its text; it resumes only on that history', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-ref-'));
    const history = session(40);
    const cp = RefCheckpointSchema.parse(await midSummary(dir, history));
    expect(cp.base.count).toBe(history.length);
    expect(JSON.stringify(cp)).not.toContain('filler line');
    expect(statSync(join(dir, 'turn.json')).size).toBeLessThan(8_000);

    const other = session(41);
    await expect(runner().resumeTurn(cp, { history: other })).rejects.toThrow(/another session history/);
    await expect(runner().resumeTurn(cp)).rejects.toThrow(UserError);
    const resumed = await runner().resumeTurn(cp, { history });
    const straight = await runner().runTurn({ turnId: 't1', history });
    expect(resumed.decision).toBe('compacted');
    expect(resumed.history).toEqual(straight.history);
    expect(resumed.request).toEqual(straight.request);
  });

  it('R2: a checkpoint written whole by an earlier version still resumes from its file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-old-'));
    const history = session(40);
    const cp = RefCheckpointSchema.parse(await midSummary(dir, history));
    // The same turn as an earlier version wrote it: every list in full beside the snapshot.
    const written = decodeWritten(cp.written, cp.writtenRefs, history, cp.texts) as Message[];
    const messages = Object.fromEntries([
      [cp.base.ref, history],
      ...Object.entries(cp.lists).map(([ref, list]) => [ref, decodeList(list, history, written)]),
    ]);
    const old = join(dir, 'old-turn.json');
    const { turnId, startedAt, snapshot, texts, results } = cp;
    const store = { messages, texts, results };
    writeFileSync(old, JSON.stringify({ version: 1, machine: 'turn', turnId, startedAt, snapshot, store }));
    const resumed = await runner().resumeTurn(old);
    const straight = await runner().runTurn({ turnId: 't1', history });
    expect(resumed.decision).toBe('compacted');
    expect(resumed.history).toEqual(straight.history);
  });
});
