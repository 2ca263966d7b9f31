import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STALL_PROBE, STALL_READ, STALL_RESET, stallReport, type Noted } from './loop-stalls.js';
import { INSPECTOR_URL, openInspector } from './process-memory.js';
import { percentile, startChild, stopChild } from './serve-latency.js';
import { body, CAPACITY, cellReads, MODEL, openingGate, send } from './serve-scale.js';
import { startUpstreamThread } from './upstream-thread.js';

/*
 * Where `compactor serve` stalls under many sessions at once, as in one cell of the bench by
 * history size: `npx tsx dev/bench/serve-stalls.ts [tokens] [sessions] [turns] [memory|data-dir]`.
 * Prints the proxy's own p50 and p99, the stretches in which its event loop took no turn, its
 * garbage collections, and what its CPU profile ran inside those stretches.
 */
const [tokensArg = '100000', sessionsArg = '50', turnsArg = '4', mode = 'memory'] = process.argv.slice(2);
const [tokens, sessions, turns] = [tokensArg, sessionsArg, turnsArg].map(Number) as [number, number, number];
const reads = cellReads(tokens, turns);
// The fake model in a thread, and every body made before the requests, as in the bench: on the
// loop that times the requests, either delayed them.
const upstream = await startUpstreamThread(5, MODEL);
const bodies = Array.from({ length: sessions }, (_, s) =>
  Array.from({ length: turns + 1 }, (_, turn) => Buffer.from(body(reads, `s${s}`, tokens, turn))),
);
const dataDir = mkdtempSync(join(tmpdir(), 'compactor-stalls-'));
const proxy = await startChild(
  [
    ...['--inspect=127.0.0.1:0', '--import', 'tsx', 'src/bin/compactor.ts', 'serve', '--port', '0'],
    ...['--openai-upstream', upstream.url, '--capacity', String(CAPACITY)],
    ...(mode === 'data-dir' ? ['--data-dir', dataDir] : []),
  ],
  new RegExp(`${INSPECTOR_URL.source}[\\s\\S]*serving on (http:\\/\\/\\S+)`),
);
const inspector = await openInspector(proxy.match[1]!);
const target = { name: mode, url: `${proxy.match[2]}/v1`, headers: {} };
try {
  await inspector.evaluate(STALL_PROBE);
  await send(target, body(reads, 'warm', 10_000, 0));
  const times: number[] = [];
  let failed = 0;
  // Why requests failed, by message: which hop dropped them shows in it.
  const failures = new Map<string, number>();
  // As in the bench: what follows the openings is measured.
  const allOpen = openingGate(sessions, async () => {
    await inspector.evaluate(STALL_RESET);
    await inspector.startProfile();
  });
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let turn = 0; turn <= turns; turn++) {
        if (turn === 1) await allOpen();
        // A failed request is counted, and the run goes on (as in the bench).
        const ms = await send(target, bodies[s]![turn]!).catch((e: unknown) => {
          failed++;
          const why = String((e as Error).message ?? e);
          failures.set(why, (failures.get(why) ?? 0) + 1);
        });
        if (turn > 0 && ms !== undefined) times.push(ms);
      }
    }),
  );
  const profile = await inspector.stopProfile();
  const noted = (await inspector.evaluate(STALL_READ)) as Noted;
  const [p50, p99] = [percentile(times, 50), percentile(times, 99)];
  console.log(
    `${tokens / 1000}k tokens, ${sessions} sessions, ${turns} requests each, ${mode}: p50 ${Math.round(p50)} ms, p99 ${Math.round(p99)} ms, p99 / p50 ${(p99 / p50).toFixed(2)}, ${failed} failed`,
  );
  for (const [why, n] of failures) console.log(`  ${n} failed: ${why}`);
  for (const line of stallReport(profile as Parameters<typeof stallReport>[0], noted)) console.log(line);
} finally {
  await inspector.close();
  await stopChild(proxy.child);
  await upstream.close();
  rmSync(dataDir, { recursive: true, force: true });
}
