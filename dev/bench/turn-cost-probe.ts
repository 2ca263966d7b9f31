import { startUpstreamThread } from './upstream-thread.js';
import { STALL_PROBE, STALL_READ, STALL_RESET, type Noted } from './loop-stalls.js';
import { openInspector } from './process-memory.js';
import { percentile, serveInspected, stopChild } from './serve-latency.js';
import { arrivals, body, CAPACITY, cell, cellReads, MODEL, send, type Target } from './serve-scale.js';
import { nowMs } from './timing.js';

/*
 * What each turn of a session costs a proxy alone: `npx tsx dev/bench/turn-cost-probe.ts [tokens]
 * [sessions] [warm rounds] [OTHER_CHECKOUT]`. After `warm rounds` bursts (as the spread row's),
 * `sessions` sessions open at once, then their 4 requests go one at a time in the spread row's
 * order, nothing else in flight: each request's time is the proxy's own cost of it. Per turn:
 * p50, p90 and the slowest request, and the collections meanwhile.
 */
const [tokensArg = '100000', sessionsArg = '50', warmArg = '2', other] = process.argv.slice(2);
const [tokens, sessions, warm] = [tokensArg, sessionsArg, warmArg].map(Number) as [number, number, number];
const turns = 4;
const reads = cellReads(tokens, turns);
const upstream = await startUpstreamThread(5, MODEL, false);
const checkouts = other === undefined ? [''] : ['', `${other.replace(/\/$/, '')}/`];
try {
  for (const checkout of checkouts) {
    const p = await serveInspected(
      checkout,
      ['--openai-upstream', upstream.url, '--capacity', String(CAPACITY)],
      (process.env.PROBE_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    );
    const inspector = await openInspector(p.inspectorUrl);
    await inspector.evaluate(STALL_PROBE);
    const target: Target = { name: checkout === '' ? 'this' : 'other', url: `${p.url}/v1`, headers: {} };
    try {
      for (let r = 0; r < warm; r++) await cell([target], reads, `w${r}`, tokens, sessions, 3);
      const bodies = Array.from({ length: sessions }, (_, s) =>
        Array.from({ length: turns + 1 }, (_, turn) => Buffer.from(body(reads, `t-${s}`, tokens, turn))),
      );
      await Promise.all(bodies.map((b) => send(target, b[0]!)));
      const schedule = arrivals(sessions, turns, 57, tokens * 1_000 + sessions);
      const order = schedule
        .flatMap((times, s) => times.map((at, i) => ({ at, s, turn: i + 1 })))
        .sort((a, b) => a.at - b.at);
      const byTurn = new Map<number, number[]>();
      const gcByTurn = new Map<number, number>();
      const fullByTurn = new Map<number, number>();
      const slow: string[] = [];
      await inspector.evaluate(STALL_RESET);
      // PROBE_ALLOC=1: every allocation; =old: those that outlive a scavenge (what fills the old generation).
      const sampling = process.env.PROBE_ALLOC === '1' || process.env.PROBE_ALLOC === 'old';
      if (sampling)
        await inspector.post('HeapProfiler.startSampling', {
          samplingInterval: 16_384,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: process.env.PROBE_ALLOC === '1',
        });
      for (const [n, q] of order.entries()) {
        const t0 = nowMs();
        await send(target, bodies[q.s]![q.turn]!);
        const ms = nowMs() - t0;
        const noted = (await inspector.evaluate(STALL_READ)) as Noted;
        await inspector.evaluate(STALL_RESET);
        const gc = noted.gc.reduce((a, b) => a + b, 0);
        const full = noted.major.reduce((a, b) => a + b, 0);
        byTurn.set(q.turn, [...(byTurn.get(q.turn) ?? []), ms]);
        gcByTurn.set(q.turn, (gcByTurn.get(q.turn) ?? 0) + gc);
        fullByTurn.set(q.turn, (fullByTurn.get(q.turn) ?? 0) + full);
        if (ms > 20)
          slow.push(
            `#${n} turn ${q.turn} ${ms.toFixed(1)} ms (GC ${gc.toFixed(1)}, full ${full.toFixed(1)})`,
          );
      }
      if (sampling) {
        const { profile } = (await inspector.post('HeapProfiler.stopSampling')) as {
          profile: SamplingProfile;
        };
        for (const line of allocationsByStack(profile, order.length)) console.log(`  ${line}`);
      }
      const held = await inspector.memoryAfterCollection(p.child.pid);
      console.log(
        `${target.name} after the turns: heap ${(held.heapUsed / 2 ** 20).toFixed(1)} MiB, array buffers ${(held.arrayBuffers / 2 ** 20).toFixed(1)} MiB`,
      );
      // PROBE_SNAPSHOT=file: the proxy's heap once the turns are answered.
      if (process.env.PROBE_SNAPSHOT)
        await inspector.evaluate(
          `require('node:v8').writeHeapSnapshot(${JSON.stringify(process.env.PROBE_SNAPSHOT)})`,
        );
      for (const [turn, l] of [...byTurn].sort((a, b) => a[0] - b[0]))
        console.log(
          `${target.name} turn ${turn}: p50 ${percentile(l, 50).toFixed(1)} p90 ${percentile(l, 90).toFixed(1)} ` +
            `max ${Math.max(...l).toFixed(1)} sum ${l.reduce((a, b) => a + b, 0).toFixed(0)} ms; ` +
            `GC ${gcByTurn.get(turn)!.toFixed(0)} ms (full ${fullByTurn.get(turn)!.toFixed(0)})`,
        );
      for (const line of slow) console.log(`  ${line}`);
    } finally {
      await inspector.close();
      await stopChild(p.child);
    }
  }
} finally {
  await upstream.close();
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}
interface SamplingProfile {
  head: SamplingNode;
}

/** Bytes allocated per request, by the innermost two functions of ours on the stack and the leaf. */
function allocationsByStack(profile: SamplingProfile, requests: number): string[] {
  const totals = new Map<string, number>();
  const walk = (node: SamplingNode, ours: string[]) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const mine = /\/(src|machines)\//.test(url)
      ? [
          ...ours,
          `${functionName || '(anonymous)'} ${url.replace(/.*\/(src|machines)\//, '')}:${lineNumber + 1}`,
        ]
      : ours;
    if (node.selfSize > 0) {
      const key = `${mine.slice(-2).join(' > ')} | ${functionName || '(anonymous)'}`;
      totals.set(key, (totals.get(key) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, mine);
  };
  walk(profile.head, []);
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  return [
    `allocated ${(all / requests / 1024).toFixed(0)} KiB/request, by stack:`,
    ...[...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30)
      .map(([k, v]) => `${(v / requests / 1024).toFixed(0).padStart(6)} KiB  ${k}`),
  ];
}
