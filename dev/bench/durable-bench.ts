import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg, type Message } from '../../src/messages/message.js';
import { createCompactorSession } from '../../src/session/index.js';
import { syntheticSession } from './synthetic-session.js';
import { median, nowMs } from './timing.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/** A durable turn may take at most this many times an in-memory one. */
export const DURABLE_RATIO_GOAL = 1.3;

/** One new exchange a turn adds: a user question and the agent's short answer. */
function exchange(i: number): Message[] {
  return [msg.user(`Step ${i}: check the next failing test.`), msg.assistant(`Looked at step ${i}.`)];
}

interface Timing {
  /** Median ms of one turn. */
  turnMs: number;
  /** Size of the turn checkpoint after the last turn (bytes), or 0 when none was written. */
  checkpointBytes: number;
  /** How many turns compacted. */
  compactions: number;
}

/** Runs `turns` turns of the product on `history`, in memory or with a session directory. */
async function timeTurns(history: readonly Message[], turns: number, dir: string | null): Promise<Timing> {
  const session = createCompactorSession({
    history,
    ...(dir ? { sessionDir: dir } : {}),
    limits: { capacity: 128_000 },
  });
  const times: number[] = [];
  let compactions = 0;
  try {
    for (let i = 0; i < turns; i++) {
      const t0 = nowMs();
      const r = await session.runTurn({ pending: exchange(i) });
      times.push(nowMs() - t0);
      if (r.decision === 'compacted') compactions++;
    }
  } finally {
    session.close();
  }
  const file = dir ? join(dir, 'snapshots', 'turn.json') : null;
  const checkpointBytes = file && existsSync(file) ? statSync(file).size : 0;
  return { turnMs: median(times), checkpointBytes, compactions };
}

/**
 * The same turns on the same long session, in memory and with a session directory, interleaved
 * so a busy machine slows both alike: what the durable store (event log and turn checkpoint)
 * adds to a turn.
 */
async function durableTurns(ctx: BenchContext): Promise<BenchSection> {
  const sizes = ctx.quick ? [1_002] : [4_002, 16_002];
  const turns = ctx.quick ? 3 : 5;
  const rounds = ctx.quick ? 1 : 3;
  const rows: Array<Array<string | number>> = [];
  for (const size of sizes) {
    const history = syntheticSession(size);
    const memory: number[] = [];
    const durable: number[] = [];
    let last: Timing | null = null;
    let compactions = 0;
    for (let r = 0; r < rounds; r++) {
      const m = await timeTurns(history, turns, null);
      memory.push(m.turnMs);
      const dir = mkdtempSync(join(tmpdir(), 'compactor-durable-bench-'));
      try {
        last = await timeTurns(history, turns, dir);
        durable.push(last.turnMs);
        compactions = last.compactions;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      ctx.log(
        `bench: durable ${size} messages round ${r + 1}: ${m.turnMs.toFixed(0)} / ${last.turnMs.toFixed(0)} ms`,
      );
    }
    const ratio = median(durable) / median(memory);
    rows.push([
      size,
      median(memory),
      median(durable),
      ratio,
      `${((last?.checkpointBytes ?? 0) / 1024).toFixed(1)} KB`,
      `${compactions} of ${turns}`,
      ratio <= DURABLE_RATIO_GOAL ? 'yes' : 'NO',
    ]);
  }
  return {
    title: 'Durable turn (sessionDir) vs in-memory turn',
    headers: [
      'messages',
      'memory ms/turn',
      'sessionDir ms/turn',
      'ratio',
      'turn.json',
      'compacted',
      `within ${DURABLE_RATIO_GOAL}×`,
    ],
    rows,
    notes: [
      `createCompactorSession on a synthetic session (offline route, 128k window), ${turns} turns each adding one exchange; median turn of ${rounds} interleaved rounds; ${process.version}.`,
      'The durable run appends every message to events.jsonl (fsynced) and checkpoints the turn in snapshots/turn.json; turn.json is its size after the last turn.',
    ],
  };
}

/** Durable turns against in-memory ones. */
export const durableSuite: BenchSuite = {
  name: 'durable',
  async run(ctx) {
    return [await durableTurns(ctx)];
  },
};
