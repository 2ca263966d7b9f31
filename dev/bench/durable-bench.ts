import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg, type Message } from '../../src/messages/message.js';
import { createCompactorSession } from '../../src/session/index.js';
import { syntheticSession } from './synthetic-session.js';
import { median, nowMs, cpuMs } from './timing.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/** A durable turn may take at most this many times an in-memory one. */
export const DURABLE_RATIO_GOAL = 1.3;

/** The windows: one that holds the whole session (no turn compacts), one the first turn compacts in. */
const CASES: Array<[string, number]> = [
  ['holds the session', 20_000_000],
  ['128k (first turn compacts)', 128_000],
];

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** One new exchange a turn adds: a user question and the agent's short answer. */
function exchange(i: number): Message[] {
  return [msg.user(`Step ${i}: check the next failing test.`), msg.assistant(`Looked at step ${i}.`)];
}

/**
 * What the disk takes for the one fsync a durable turn needs: a bare `fsyncSync` after
 * appending a line like a turn's to a file in `dir`, median of `n`: its time and the process's
 * CPU time for it (ms).
 */
export function fsyncFloorMs(dir: string, n: number): { ms: number; cpuMs: number } {
  const fd = openSync(join(dir, 'fsync-floor.jsonl'), 'a');
  const times: number[] = [];
  const cpu: number[] = [];
  try {
    const line = `${JSON.stringify({ type: 'message.appended', message: exchange(0)[0] })}\n`;
    for (let i = 0; i < n; i++) {
      writeSync(fd, line);
      const [c0, t0] = [cpuMs(), nowMs()];
      fsyncSync(fd);
      times.push(nowMs() - t0);
      cpu.push(cpuMs() - c0);
    }
  } finally {
    closeSync(fd);
  }
  return { ms: median(times), cpuMs: median(cpu) };
}

/** A folder in memory (tmpfs), where an fsync costs nothing: what the durable code adds without the disk. */
const RAM_DIR = '/dev/shm';

interface Paired {
  memoryMs: number[];
  durableMs: number[];
  /** Durable over in-memory time of the same turn, one per turn. */
  ratios: number[];
  /** The same with the session directory in memory (empty when there is no such folder). */
  /** CPU time of the process, in memory and durable, one per turn (ms). */
  memoryCpuMs: number[];
  durableCpuMs: number[];
  /** Size of the turn checkpoint after the last turn (bytes), or 0 when none was written. */
  checkpointBytes: number;
  /** Of those, the messages and summary texts the turn wrote itself. */
  writtenBytes: number;
  /** How many turns compacted. */
  compactions: number;
  /** Median of the bare fsyncs measured between the turns (ms), and of their CPU time. */
  fsyncMs: number;
  fsyncCpuMs: number;
}

const sessionOn = (history: readonly Message[], dir: string | null, capacity: number) =>
  createCompactorSession({ history, ...(dir ? { sessionDir: dir } : {}), limits: { capacity } });

/** The size of the turn checkpoint in `dir`, and of what the turn wrote itself in it. */
function checkpointSize(dir: string): { checkpointBytes: number; writtenBytes: number } {
  const file = join(dir, 'snapshots', 'turn.json');
  if (!existsSync(file)) return { checkpointBytes: 0, writtenBytes: 0 };
  const cp = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return {
    checkpointBytes: statSync(file).size,
    writtenBytes: JSON.stringify([cp.written ?? [], cp.texts ?? {}]).length,
  };
}

type Session = ReturnType<typeof createCompactorSession>;

/** One turn: its wall time and the process's CPU time (ms), and whether it compacted. */
async function timedTurn(session: Session, i: number) {
  const [c0, t0] = [cpuMs(), nowMs()];
  const r = await session.runTurn({ pending: exchange(i) });
  const ms = nowMs() - t0;
  return { ms, cpuMs: cpuMs() - c0, compacted: r.decision === 'compacted' };
}

/**
 * The same turns on the same history in memory and with a session directory, turn by turn in
 * turn (a busy machine slows both alike). Only two sessions are alive at once: a third long
 * history in the same heap slowed every turn of the other two by its collections.
 */
async function pairedTurns(
  history: readonly Message[],
  turns: number,
  dir: string,
  capacity: number,
): Promise<Paired> {
  const memory = sessionOn(history, null, capacity);
  const durable = sessionOn(history, join(dir, 'session'), capacity);
  const out: Omit<Paired, 'fsyncMs' | 'fsyncCpuMs'> = {
    memoryMs: [],
    durableMs: [],
    ratios: [],
    memoryCpuMs: [],
    durableCpuMs: [],
    checkpointBytes: 0,
    writtenBytes: 0,
    compactions: 0,
  };
  const fsyncs: Array<{ ms: number; cpuMs: number }> = [];
  try {
    for (let i = 0; i < turns; i++) {
      const m = await timedTurn(memory, i);
      const d = await timedTurn(durable, i);
      out.memoryMs.push(m.ms);
      out.durableMs.push(d.ms);
      out.ratios.push(d.ms / m.ms);
      out.memoryCpuMs.push(m.cpuMs);
      out.durableCpuMs.push(d.cpuMs);
      if (d.compacted) out.compactions++;
      // The disk's own time for one fsync, measured between the same turns.
      fsyncs.push(fsyncFloorMs(dir, 1));
    }
  } finally {
    memory.close();
    durable.close();
  }
  return {
    ...out,
    ...checkpointSize(join(dir, 'session')),
    fsyncMs: median(fsyncs.map((f) => f.ms)),
    fsyncCpuMs: median(fsyncs.map((f) => f.cpuMs)),
  };
}

/** The median-turn ratio of the same turns with the session directory in memory (tmpfs), or undefined without one. */
async function ramRatioOf(history: readonly Message[], turns: number, capacity: number) {
  if (!existsSync(RAM_DIR)) return undefined;
  const ramDir = mkdtempSync(join(RAM_DIR, 'compactor-durable-bench-'));
  try {
    return median((await pairedTurns(history, turns, ramDir, capacity)).ratios);
  } finally {
    rmSync(ramDir, { recursive: true, force: true });
  }
}

/**
 * Whether the durable turn is within the goal; when it is not but the same turn with its
 * directory in memory is, and the wait for one fsync alone is more than the goal leaves
 * of an in-memory turn, the disk decides it, not the code.
 */
function verdict(ratio: number, ramRatio: number, fsyncMs: number, memoryMs: number): string {
  if (ratio <= DURABLE_RATIO_GOAL) return 'yes';
  const diskDecides = ramRatio <= DURABLE_RATIO_GOAL && fsyncMs > (DURABLE_RATIO_GOAL - 1) * memoryMs;
  return diskDecides ? 'NO: the disk' : 'NO';
}

/** A few turns on a small session in memory and in a directory, so neither path is timed cold. */
async function warmUp(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-durable-warm-'));
  try {
    await pairedTurns(syntheticSession(402), 6, dir, 8_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the durable store (event log and turn checkpoint) adds to a turn of the product on a
 * long session: the same turns in memory and with a session directory.
 */
async function durableTurns(ctx: BenchContext): Promise<BenchSection> {
  const sizes = ctx.quick ? [1_002] : [4_002, 16_002];
  const turns = ctx.quick ? 3 : 30;
  const rows: Array<Array<string | number>> = [];
  await warmUp();
  for (const size of sizes)
    for (const [label, capacity] of CASES) {
      const dir = mkdtempSync(join(tmpdir(), 'compactor-durable-bench-'));
      try {
        const history = syntheticSession(size);
        const p = await pairedTurns(history, turns, dir, capacity);
        const ramRatio = await ramRatioOf(history, turns, capacity);
        const ratio = median(p.ratios);
        const total = sum(p.durableMs) / sum(p.memoryMs);
        const extra = median(p.durableMs.map((d, i) => d - p.memoryMs[i]!));
        const cpu = median(p.durableCpuMs.map((d, i) => d / p.memoryCpuMs[i]!));
        const extraCpu = median(p.durableCpuMs.map((d, i) => d - p.memoryCpuMs[i]!));
        ctx.log(
          `bench: durable ${size} messages, ${label}: ratio ${ratio.toFixed(2)}, in RAM ${ramRatio?.toFixed(2) ?? '—'}, CPU ${cpu.toFixed(2)}, total ${total.toFixed(2)}, fsync ${p.fsyncMs.toFixed(2)} ms`,
        );
        rows.push([
          size,
          label,
          median(p.memoryMs),
          median(p.durableMs),
          ratio,
          total,
          extra,
          p.fsyncMs,
          ramRatio ?? '—',
          median(p.memoryCpuMs),
          median(p.durableCpuMs),
          cpu,
          extraCpu,
          p.fsyncCpuMs,
          `${(p.checkpointBytes / 1024).toFixed(1)} KB`,
          `${((p.checkpointBytes - p.writtenBytes) / 1024).toFixed(1)} KB`,
          `${p.compactions} of ${turns}`,
          verdict(ratio, ramRatio ?? Infinity, p.fsyncMs, median(p.memoryMs)),
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  return {
    title: 'Durable turn (sessionDir) vs in-memory turn',
    headers: [
      'messages',
      'window',
      'memory ms/turn',
      'sessionDir ms/turn',
      'ratio (median turn)',
      'ratio (all turns)',
      'durable extra ms/turn',
      'fsync floor ms',
      'ratio in RAM',
      'memory CPU ms/turn',
      'sessionDir CPU ms/turn',
      'CPU ratio',
      'durable extra CPU ms/turn',
      'fsync floor CPU ms',
      'turn.json',
      'without the summary',
      'compacted',
      `within ${DURABLE_RATIO_GOAL}×`,
    ],
    rows,
    notes: [
      `createCompactorSession on a synthetic session (offline route), ${turns} turns each adding one exchange, in memory and with a sessionDir turn by turn in turn, after a few warm-up turns on both; ratio (median turn) = median of each turn's durable/in-memory time, ratio (all turns) = total durable/in-memory time; durable extra = median of each turn's durable minus in-memory time; ${process.version}.`,
      "fsync floor = median of a bare fsyncSync after appending one line to a file beside the session, measured after each turn: a durable turn must wait for one (its new messages are on disk when it returns); its fsync runs while the turn works, so it costs the turn only what it takes beyond the turn's own work.",
      `ratio in RAM = the same median-turn ratio with the session directory in ${RAM_DIR} (tmpfs: the fsync costs nothing), what the durable code adds without the disk. CPU = the process's user and system time per turn (all its threads: the fsync in the thread pool and the garbage collector's helpers included), median; CPU ratio = median of each turn's durable/in-memory CPU time.`,
      "durable extra CPU = median of each turn's durable minus in-memory CPU time; fsync floor CPU = the process's CPU time for the bare fsync. The extra is a few tenths of a millisecond per turn whatever the history: it comes with the fsync in flight (the kernel's work for it, its thread, the wait for its end; with the fsync left out the CPU ratio is about 1), not with work that grows with the history, so it weighs most where a turn is cheapest, after a compaction.",
      `The goal column compares the real durable turn with the in-memory one: "NO: the disk" where the turn is within the goal in RAM and one fsync alone is more than the goal leaves of an in-memory turn (${Math.round((DURABLE_RATIO_GOAL - 1) * 100)} %), so the disk, not the code, decides it.`,
      'The durable run appends the new messages of a turn to events.jsonl (one write, one fsync) and checkpoints a compacting turn in snapshots/turn.json (a turn that does not compact writes none and reads none): its size after the last turn, and without the summary the compacting turn wrote (the references, the machine snapshot and the cache cycle).',
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
