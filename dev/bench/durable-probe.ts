import fs from 'node:fs';
import { join } from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import { msg, type Message } from '../../src/messages/message.js';
import { median, nowMs, cpuMs } from './timing.js';

/**
 * Where a durable turn's extra time goes, without touching the code it measures: the same
 * turns in memory and with a session directory, one after the other, with the process's
 * `writeSync` and `fsync` timed (wrapped before the session code loads).
 *
 *   npx tsx dev/bench/durable-probe.ts [messages=16002] [capacity=128000] [turns=300] [dir=/dev/shm]
 *
 * Prints, per durable turn (medians, ms): its time and the in-memory turn's, the paired extra,
 * the work before the write (validation, framing), the write, handing the fsync to the thread
 * pool, the fsync as the event loop sees it (issued to its callback), and how long the turn
 * waited for it past the in-memory turn's time.
 */

const [size = '16002', capacity = '128000', turns = '300', where = '/dev/shm'] = process.argv.slice(2);

const marks: Record<string, number> = {};
const { writeSync, fsync } = fs;
fs.writeSync = ((...args: Parameters<typeof writeSync>) => {
  marks.writeStart ??= nowMs();
  const n = writeSync(...args);
  marks.writeEnd = nowMs();
  return n;
}) as typeof writeSync;
fs.fsync = ((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
  marks.fsyncIssue = nowMs();
  fsync(fd, (e) => {
    marks.fsyncSeen = nowMs();
    cb(e);
  });
  marks.fsyncIssued = nowMs();
}) as typeof fsync;
syncBuiltinESMExports();
const { createCompactorSession } = await import('../../src/session/index.js');
const { syntheticSession } = await import('./synthetic-session.js');

const exchange = (i: number): Message[] => [
  msg.user(`Step ${i}: check the next failing test.`),
  msg.assistant(`Looked at step ${i}.`),
];
const history = syntheticSession(Number(size));
const dir = fs.mkdtempSync(join(where, 'compactor-durable-probe-'));
const limits = { capacity: Number(capacity) };
const memory = createCompactorSession({ history, limits });
const durable = createCompactorSession({ history, sessionDir: join(dir, 'session'), limits });

type Row = Record<string, number>;
const rows: Row[] = [];
const WARM = 20;
try {
  for (let i = 0; i < Number(turns) + WARM; i++) {
    let [c0, t0] = [cpuMs(), nowMs()];
    await memory.runTurn({ pending: exchange(i) });
    const m = { ms: nowMs() - t0, cpu: cpuMs() - c0 };
    for (const k of Object.keys(marks)) delete marks[k];
    [c0, t0] = [cpuMs(), nowMs()];
    await durable.runTurn({ pending: exchange(i) });
    const end = nowMs();
    if (i < WARM || marks.fsyncSeen === undefined) continue;
    const { writeStart, writeEnd, fsyncIssue, fsyncIssued, fsyncSeen } = marks as Required<typeof marks>;
    rows.push({
      memory: m.ms,
      durable: end - t0,
      extra: end - t0 - m.ms,
      cpuExtra: cpuMs() - c0 - m.cpu,
      beforeWrite: writeStart - t0,
      write: writeEnd - writeStart,
      handOff: fsyncIssued - fsyncIssue,
      fsyncSeen: fsyncSeen - fsyncIssue,
      waitPastMemory: Math.max(0, fsyncSeen - t0 - m.ms),
      afterFsync: end - fsyncSeen,
    });
  }
} finally {
  memory.close();
  durable.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
const keys = Object.keys(rows[0] ?? {});
console.log(`${size} messages, capacity ${capacity}, ${rows.length} turns, session directory in ${where}`);
for (const k of keys) console.log(`  ${k.padEnd(16)} ${median(rows.map((r) => r[k]!)).toFixed(3)} ms`);
