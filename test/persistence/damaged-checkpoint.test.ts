import { describe, expect, it } from '@jest/globals';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '#src/core/errors.js';
import { msg, type Message } from '#src/messages/message.js';
import { createTurnRunner, resolveRunConfig } from '#src/runtime/index.js';
import { deferred, settle } from '#support/deferred.js';
import { estimator, FakeSummarizer } from '#support/runtime/fake-summarizer.js';

const limits = { capacity: 2_000, reservedOutput: 200 };
// A window this small leaves a pass little room, so the defaults would clear instead of calling the summarizer.
const policy = { clearWhenPassBuysFewerTurns: 0 };

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

/** A checkpoint written while the summary call is in flight (a valid, active snapshot). */
async function midSummaryCheckpoint(dir: string): Promise<string> {
  const live = join(dir, 'turn.json');
  const saved = join(dir, 'saved.json');
  const s = new FakeSummarizer();
  s.gate = deferred<void>().promise;
  const controller = new AbortController();
  const run = createTurnRunner({
    estimator,
    config: resolveRunConfig({ limits, policy }),
    compaction: { summarizer: s },
  }).runTurn({ turnId: 'cp', history: session(10) }, { signal: controller.signal, checkpointPath: live });
  while (s.requests.length === 0) await settle();
  // The checkpoint is written without blocking the turn: wait for it to land.
  while (!existsSync(live)) await settle();
  copyFileSync(live, saved);
  controller.abort();
  await run;
  return saved;
}

describe('resuming a damaged checkpoint (D3)', () => {
  it('D3: a damaged snapshot is a one-line UserError, never a crash or a turn that waits forever', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-cp-'));
    const saved = await midSummaryCheckpoint(dir);
    const good = JSON.parse(readFileSync(saved, 'utf8'));
    const cases: Array<[string, (cp: any) => void, RegExp]> = [
      ['empty snapshot', (cp) => (cp.snapshot = {}), /snapshot\.status/],
      [
        'unknown state',
        (cp) => (cp.snapshot.value = { working: 'dreaming' }),
        /unknown state "working\.dreaming"/,
      ],
      [
        // The turn before outcomes became final states waited in working.checkingPreflight.
        'state of an older turn machine',
        (cp) => (cp.snapshot.value = { working: 'checkingPreflight' }),
        /unknown state "working\.checkingPreflight"/,
      ],
      [
        'in-flight actor missing',
        (cp) => (cp.snapshot.children = {}),
        /missing the in-flight actor "compaction"/,
      ],
      ['not a turn', (cp) => (cp.machine = 'compaction'), /not a turn/],
    ];
    for (const [name, damage, expected] of cases) {
      const cp = structuredClone(good);
      damage(cp);
      const file = join(dir, `${name.replace(/ /g, '-')}.json`);
      writeFileSync(file, JSON.stringify(cp));
      const resumed = createTurnRunner({
        estimator,
        config: resolveRunConfig({ limits }),
        compaction: { summarizer: new FakeSummarizer() },
      }).resumeTurn(file, { history: session(10) });
      await expect(resumed).rejects.toThrow(UserError);
      await expect(resumed).rejects.toThrow(expected);
    }
    // The undamaged checkpoint still resumes.
    const ok = await createTurnRunner({
      estimator,
      config: resolveRunConfig({ limits }),
      compaction: { summarizer: new FakeSummarizer() },
    }).resumeTurn(saved, { history: session(10) });
    expect(ok.decision).toBe('compacted');
  });
});
