import fs from 'node:fs';
import { join } from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import { msg, type Message } from '../../src/messages/message.js';
import { median, nowMs, cpuMs } from './timing.js';

/**
 * Where a durable turn's extra time goes, without touching the code it measures: the same
 * turns in memory and with a session directory, one after the other, with the process's
 * `writeSync` timed (wrapped before the session code loads). The fsync runs on a thread of
 * its own (src/store/fsync-thread.ts), out of sight here: what follows the write is the turn's
 * own work and its wait for that fsync.
 *
 *   npx tsx dev/bench/durable-probe.ts [messages=16002] [capacity=128000] [turns=300] [dir=/dev/shm]
 *
 * Prints, per durable turn (medians, ms): its time and the in-memory turn's, the paired extra,
 * the work before the write (validation, framing), the write, and the rest of the turn after it
 * beside the in-memory turn's whole time.
 */

const [size = '16002', capacity = '128000', turns = '300', where = '/dev/shm'] = process.argv.slice(2);

const marks: Record<string, number> = {};
const { writeSync } = fs;
fs.writeSync = ((...args: Parameters<typeof writeSync>) => {
  marks.writeStart ??= nowMs();
  const n = writeSync(...args);
  marks.writeEnd = nowMs();
  return n;
}) as typeof writeSync;
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
    if (i < WARM || marks.writeEnd === undefined) continue;
    const { writeStart, writeEnd } = marks as Required<typeof marks>;
    rows.push({
      memory: m.ms,
      durable: end - t0,
      extra: end - t0 - m.ms,
      cpuExtra: cpuMs() - c0 - m.cpu,
      beforeWrite: writeStart - t0,
      write: writeEnd - writeStart,
      afterWrite: end - writeEnd,
      memoryPastWrite: m.ms - (writeEnd - t0),
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
