import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { loopScript } from '../clients/tool-loop.js';
import { startUpstreamThread } from './upstream-thread.js';
import {
  STALL_PROBE,
  STALL_READ,
  STALL_RESET,
  stallReport,
  watchThisProcess,
  type Noted,
} from './loop-stalls.js';
import { openInspector, type Inspector } from './process-memory.js';
import {
  freePort,
  GATEWAY,
  percentile,
  processCpuMs,
  processFaults,
  serveInspected,
  startChild,
  stopChild,
} from './serve-latency.js';
import {
  CAPACITY,
  cell,
  cellReads,
  MODEL,
  msPerRequest,
  queueModel,
  spreadCell,
  spreadRate,
  type SpreadRequest,
  type Target,
} from './serve-scale.js';

/*
 * One cell of the bench by history size, with what each proxy spent per counted request:
 * `npx tsx dev/bench/serve-cell-probe.ts [tokens] [sessions] [turns] [rounds] [memory,data-dir] [OTHER_CHECKOUT] [PROFILE_DIR]`.
 * Every body goes to direct, each proxy and Portkey's gateway, one path at a time as in the
 * bench; the cell runs `rounds` times with fresh sessions (the first round warms every path and
 * is not counted).
 * With another checkout its proxies get the same bodies in the same rounds (a before and after).
 * Per proxy: CPU (all threads, and its main thread alone) and minor page faults (fresh memory
 * touched) per request from /proc, and through its inspector its garbage collections and its
 * longest stretch without a turn of the event loop; the same for this process, which times
 * every path. PROBE_TRACE=file writes each
 * request's start and time and every stall to the file; PROBE_STREAM=1 asks for streamed answers.
 * PROBE_OTHER_FLAGS='--flag ...': Node flags for the other checkout's proxies.
 * PROBE_SPREAD=n: the bench's spread-arrival row instead, n times (see {@link measureSpread});
 * with PROBE_TRACE=prefix each of its runs goes to prefix.<run> (every request, each proxy's
 * stalls and collections, and its CPU profile with PROBE_PROFILE=1). PROBE_NODE_FLAGS='--flag ...':
 * Node flags for every proxy (`--trace-gc`, whose lines PROBE_CHILD_LOG=prefix keeps in prefix.<pid>).
 */
const [
  tokensArg = '10000',
  sessionsArg = '1',
  turnsArg = '12',
  roundsArg = '4',
  modesArg = 'memory',
  other,
  profileDir,
] = process.argv.slice(2);
const [tokens, sessions, turns, rounds] = [tokensArg, sessionsArg, turnsArg, roundsArg].map(Number) as [
  number,
  number,
  number,
  number,
];
const modes = modesArg.split(',');
const reads = cellReads(tokens, turns);
// The fake model in a thread of its own, as in the bench (PROBE_FAKE_PARSES=1: one that parses
// every body, how the bench ran before); PROBE_OLD=1: in this process, every body kept until the
// round ends (how it ran before that).
const here =
  process.env.PROBE_OLD === '1'
    ? await startAgentUpstream({
        window: 'unchecked-overflow-test',
        script: loopScript(5),
        countUsage: false,
      })
    : undefined;
const upstream = here ?? (await startUpstreamThread(5, MODEL, process.env.PROBE_FAKE_PARSES === '1'));
const bench = watchThisProcess();

interface Proxy {
  name: string;
  pid: number | undefined;
  /** Absent for Portkey's gateway. */
  inspector?: Inspector;
  stop: () => Promise<void>;
}

/** What a round's stall probe noted in one proxy. */
interface Stalls {
  gcCount: number;
  gcMs: number;
  gcLongest: number;
  majorCount: number;
  majorMs: number;
  stallLongest: number;
  heapPeak: number;
}

const dirs: string[] = [];
const proxies: Proxy[] = [];
const targets: Target[] = [{ name: 'direct', url: upstream.url, headers: {} }];
const checkouts =
  other === undefined || other === '' || other === '-'
    ? [['this', '']]
    : [
        ['this', ''],
        ['other', `${other.replace(/\/$/, '')}/`],
      ];
let gateway: Awaited<ReturnType<typeof startChild>> | undefined;
try {
  for (const [label, checkout] of checkouts)
    for (const mode of modes) {
      const dir = mkdtempSync(join(tmpdir(), 'compactor-cell-probe-'));
      dirs.push(dir);
      const name = `${label} ${mode}`;
      const prof = [
        ...(profileDir === undefined || profileDir === '-'
          ? []
          : ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${name.replace(' ', '-')}`]),
        // Node flags of the other checkout's proxies alone: the same code with other flags is a
        // before and after of the flags (give this checkout as the other one).
        ...(label === 'other' ? (process.env.PROBE_OTHER_FLAGS ?? '').split(' ').filter(Boolean) : []),
        // Node flags of every proxy (e.g. --trace-gc, its lines kept with PROBE_CHILD_LOG).
        ...(process.env.PROBE_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      ];
      const p = await serveInspected(
        checkout!,
        [
          ...['--openai-upstream', upstream.url, '--capacity', String(CAPACITY)],
          ...(mode === 'data-dir' ? ['--data-dir', dir] : []),
        ],
        prof,
      );
      const inspector = await openInspector(p.inspectorUrl);
      await inspector.evaluate(STALL_PROBE);
      proxies.push({
        name,
        pid: p.child.pid,
        inspector,
        stop: async () => {
          await inspector.close();
          await stopChild(p.child);
        },
      });
      targets.push({ name, url: `${p.url}/v1`, headers: {} });
    }
  const port = await freePort();
  gateway = await startChild([GATEWAY, `--port=${port}`, '--headless'], /Ready for connections/);
  targets.push({
    name: 'Portkey',
    url: `http://127.0.0.1:${port}/v1`,
    headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream.url },
  });
  if (process.env.PROBE_SPREAD) await measureSpread(Number(process.env.PROBE_SPREAD));
  else await measure(gateway.child.pid);
} finally {
  for (const p of proxies) await p.stop();
  if (gateway !== undefined) await stopChild(gateway.child);
  await upstream.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/** What a proxy's probe noted since the round's sessions were all open. */
async function readNoted(p: Proxy): Promise<Noted> {
  return (await p.inspector!.evaluate(STALL_READ)) as Noted;
}

/** Collections and the longest stall of what a probe noted. */
function stallsOfNoted(noted: Noted): Stalls {
  return {
    gcCount: noted.gc.length,
    gcMs: noted.gc.reduce((a, b) => a + b, 0),
    gcLongest: Math.max(0, ...noted.gc),
    majorCount: noted.major.length,
    majorMs: noted.major.reduce((a, b) => a + b, 0),
    heapPeak: noted.heapPeak,
    stallLongest: Math.max(0, ...noted.gaps.map(([a, b]) => (b - a) / 1000)),
  };
}

/** Collections per request and the longest stall, in words. */
function stallText(s: Stalls, requests: number): string {
  return (
    `GC ${(s.gcCount / requests).toFixed(2)}/request ${(s.gcMs / requests).toFixed(1)} ms/request ` +
    `(longest ${Math.round(s.gcLongest)}; ${s.majorCount} full, ${Math.round(s.majorMs)} ms), ` +
    `longest loop stall ${Math.round(s.stallLongest)} ms, heap peak ${Math.round(s.heapPeak / 2 ** 20)} MiB`
  );
}

/** Runs the rounds and prints each target's latency and each process's CPU per request. */
async function measure(gatewayPid: number | undefined): Promise<void> {
  const all: Proxy[] = [...proxies, { name: 'Portkey', pid: gatewayPid, stop: async () => {} }];
  const times = new Map(targets.map((t) => [t.name, [] as number[]]));
  const failed = new Map<string, number>();
  const cpu = new Map<string, number>();
  const mainCpu = new Map<string, number>();
  const faults = new Map<string, number>();
  const stalls = new Map<string, Stalls>();
  const perRound = sessions * turns;
  const trace: unknown[] = [];
  const gaps: unknown[] = [];
  for (let r = 0; r < rounds; r++) {
    let before: number[] = [];
    let mainBefore: number[] = [];
    let faultsBefore: number[] = [];
    const out = await cell(
      targets,
      reads,
      `r${r}`,
      tokens,
      sessions,
      turns,
      async () => {
        for (const p of proxies) await p.inspector!.evaluate(STALL_RESET);
        bench.reset();
        before = all.map((p) => processCpuMs(p.pid));
        mainBefore = all.map((p) => processCpuMs(p.pid, true));
        faultsBefore = all.map((p) => processFaults(p.pid));
      },
      (t) => trace.push({ round: r, ...t }),
    );
    if (here !== undefined) {
      here.turns.length = 0;
      here.requests.length = 0;
    }
    const used = all.map((p, i) => processCpuMs(p.pid) - before[i]!);
    const usedMain = all.map((p, i) => processCpuMs(p.pid, true) - mainBefore[i]!);
    const faulted = all.map((p, i) => processFaults(p.pid) - faultsBefore[i]!);
    const notes = await Promise.all(proxies.map(readNoted));
    const noted = notes.map(stallsOfNoted);
    console.log(
      `round ${r}: cpu ms/request (main thread) ${all.map((p, i) => `${p.name} ${(used[i]! / perRound).toFixed(1)} (${(usedMain[i]! / perRound).toFixed(1)})`).join(', ')}`,
    );
    proxies.forEach((p, i) => console.log(`  ${p.name.padEnd(16)} ${stallText(noted[i]!, perRound)}`));
    const own = bench.read();
    console.log(`  ${'bench process'.padEnd(16)} ${stallText(stallsOfNoted(own), perRound)}`);
    gaps.push({ round: r, bench: own.gaps, proxies: notes.map((n, i) => [proxies[i]!.name, n.gaps]) });
    if (r === 0) continue;
    all.forEach((p, i) => cpu.set(p.name, (cpu.get(p.name) ?? 0) + used[i]!));
    all.forEach((p, i) => mainCpu.set(p.name, (mainCpu.get(p.name) ?? 0) + usedMain[i]!));
    all.forEach((p, i) => faults.set(p.name, (faults.get(p.name) ?? 0) + faulted[i]!));
    proxies.forEach((p, i) => {
      const s = noted[i]!;
      const was = stalls.get(p.name);
      stalls.set(
        p.name,
        was === undefined
          ? s
          : {
              gcCount: was.gcCount + s.gcCount,
              gcMs: was.gcMs + s.gcMs,
              gcLongest: Math.max(was.gcLongest, s.gcLongest),
              majorCount: was.majorCount + s.majorCount,
              majorMs: was.majorMs + s.majorMs,
              stallLongest: Math.max(was.stallLongest, s.stallLongest),
              heapPeak: Math.max(was.heapPeak, s.heapPeak),
            },
      );
    });
    for (const [name, l] of out.times) times.get(name)!.push(...l);
    for (const [name, n] of out.failed) failed.set(name, (failed.get(name) ?? 0) + n);
  }
  if (process.env.PROBE_TRACE) writeFileSync(process.env.PROBE_TRACE, JSON.stringify({ trace, gaps }));
  const direct = times.get('direct')!;
  const portkey = times.get('Portkey')!;
  const added = (l: number[], p: number) => percentile(l, p) - percentile(direct, p);
  const counted = perRound * (rounds - 1);
  for (const [name, l] of times) {
    const c = cpu.get(name);
    const m = mainCpu.get(name);
    const f = faults.get(name);
    const s = stalls.get(name);
    const lost = failed.get(name);
    console.log(
      [
        name.padEnd(16),
        `n ${l.length}`,
        `p50 ${percentile(l, 50).toFixed(2)}`,
        `p99 ${percentile(l, 99).toFixed(2)}`,
        `p99/p50 ${(percentile(l, 99) / percentile(l, 50)).toFixed(2)}`,
        name === 'direct'
          ? ''
          : `added p50 ${added(l, 50).toFixed(2)} p99 ${added(l, 99).toFixed(2)} vs Portkey p50 ${(added(l, 50) / added(portkey, 50)).toFixed(2)}`,
        c === undefined
          ? ''
          : `cpu ms/request ${(c / counted).toFixed(2)} (main thread ${(m! / counted).toFixed(2)})`,
        f === undefined ? '' : `page faults/request ${Math.round(f / counted)}`,
        s === undefined ? '' : stallText(s, counted),
        lost === undefined ? '' : `failed ${lost}`,
      ]
        .filter((x) => x !== '')
        .join(' '),
    );
  }
}

/** ms of [from, to] inside the stretches `spans` ([start, end] in ms). */
function overlap(from: number, to: number, spans: Array<[number, number]>): number {
  return spans.reduce((n, [a, b]) => n + Math.max(0, Math.min(to, b) - Math.max(from, a)), 0);
}

/**
 * The spread-arrival row of the bench (each path alone, `sessions` sessions opened at once, then
 * `turns` requests each at seeded random times), `times` times with new sessions, after `rounds`
 * bursts as in {@link measure} that fill the proxies with sessions and set the rate (PROBE_RATE:
 * a rate of its own). Per path: p50, p99 and p99 / p50; per slow request (its p99 region and a
 * few more) what the proxy's loop did meanwhile: ms in its stretches of 20 ms or more without a
 * loop turn, in its collections (full ones apart) and in the bench process's own stalls, and how
 * many requests of the path were in flight when it went out. PROBE_PROFILE=1: each proxy's CPU
 * profile over the row, its samples inside the stalls that overlap its slow requests.
 */
async function measureSpread(times: number): Promise<void> {
  let burst: Awaited<ReturnType<typeof cell>> | undefined;
  for (let r = 0; r < rounds; r++) burst = await cell(targets, reads, `r${r}`, tokens, sessions, turns);
  const rate = Number(process.env.PROBE_RATE) || spreadRate(targets, burst!);
  for (let run = 0; run < times; run++) {
    for (const p of proxies) await p.inspector!.evaluate(STALL_RESET);
    bench.reset();
    const profiling = process.env.PROBE_PROFILE === '1';
    if (profiling) for (const p of proxies) await p.inspector!.startProfile();
    const requests: SpreadRequest[] = [];
    await spreadCell(targets, reads, { tag: `o${run}`, tokens, sessions, turns: 4, rate }, (q) =>
      requests.push(q),
    );
    const profiles = profiling ? await Promise.all(proxies.map((p) => p.inspector!.stopProfile())) : [];
    const notes = await Promise.all(proxies.map(readNoted));
    const own = bench.read();
    if (process.env.PROBE_TRACE)
      writeFileSync(
        `${process.env.PROBE_TRACE}.${run}`,
        JSON.stringify({ requests, notes, names: proxies.map((p) => p.name), profiles }),
      );
    const ms = (gaps: Noted['gaps']) => gaps.map(([a, b]) => [a / 1000, b / 1000] as [number, number]);
    console.log(`spread run ${run}: ${sessions} sessions, ${rate.toFixed(1)} requests/s`);
    for (const t of targets) {
      const mine = requests.filter((q) => q.target === t.name);
      const l = mine.map((q) => q.ms);
      const [p50, p99] = [percentile(l, 50), percentile(l, 99)];
      const at = proxies.findIndex((p) => p.name === t.name);
      const noted = at < 0 ? undefined : notes[at]!;
      const gaps = noted === undefined ? [] : ms(noted.gaps);
      const span = (g: [number, number, number]) => [g[0], g[0] + g[1]] as [number, number];
      const minor = noted === undefined ? [] : noted.gcAt.filter((g) => g[2] !== 4).map(span);
      const major = noted === undefined ? [] : noted.gcAt.filter((g) => g[2] === 4).map(span);
      console.log(
        `  ${t.name.padEnd(16)} n ${l.length} p50 ${p50.toFixed(1)} p99 ${p99.toFixed(1)} p99/p50 ${(p99 / p50).toFixed(2)}` +
          (noted === undefined
            ? ''
            : `; ${gaps.length} stalls, longest ${Math.round(Math.max(0, ...gaps.map(([a, b]) => b - a)))} ms; ${major.length} full GCs (${Math.round(major.reduce((n, [a, b]) => n + b - a, 0))} ms), ${minor.length} others (${Math.round(minor.reduce((n, [a, b]) => n + b - a, 0))} ms)`),
      );
      const queued = queueModel(
        mine.map((q) => q.at),
        msPerRequest(burst!, t.name),
      );
      console.log(
        `    one queue, same arrivals, ${queued.service.toFixed(1)} ms each (the path's time per request in bursts): ` +
          `waits p50 ${queued.p50.toFixed(1)} p99 ${queued.p99.toFixed(1)}; the path's p99 less p50 ${(p99 - p50).toFixed(1)}`,
      );
      const slow = [...mine].sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(l.length / 100) + 3);
      const hit: Array<[number, number]> = [];
      for (const q of slow) {
        const [from, to] = [q.zero + q.start, q.zero + q.start + q.ms];
        const during = noted?.gaps.filter(([a, b]) => b / 1000 > from && a / 1000 < to) ?? [];
        const inFlight = mine.filter((o) => o !== q && o.start <= q.start && o.start + o.ms > q.start).length;
        hit.push(...gaps.filter(([a, b]) => b > from && a < to));
        console.log(
          `    ${q.ms.toFixed(1).padStart(7)} ms at ${Math.round(q.start)} (${inFlight} in flight): ` +
            `proxy stalls ${Math.round(overlap(from, to, gaps))}, full GC ${Math.round(overlap(from, to, major))}, ` +
            `other GC ${Math.round(overlap(from, to, minor))}, bench stalls ${Math.round(overlap(from, to, ms(own.gaps)))}; ` +
            `proxy CPU in those stalls ${cpuShare(during)}${mainThreadShare(during)}`,
        );
      }
      if (profiling && at >= 0) {
        const unique = [...new Map(hit.map((g) => [g[0], g])).values()].map(
          ([a, b]) => [a * 1000, b * 1000] as [number, number],
        );
        const profile = profiles[at] as Parameters<typeof stallReport>[0];
        for (const line of stallReport(profile, { ...noted!, gaps: unique })) console.log(`      ${line}`);
        // Each stall alone: a collection's share shows apart from the requests' own work.
        for (const gap of unique.sort((a, b) => a[0] - b[0])) {
          const [, , , ...top] = stallReport(profile, { ...noted!, gaps: [gap] }, 4);
          console.log(
            `      stall at ${Math.round(gap[0] / 1000 - mine[0]!.zero)} ms, ${Math.round((gap[1] - gap[0]) / 1000)} ms: ${top.map((x) => x.trim()).join('; ')}`,
          );
        }
      }
    }
  }
}

/**
 * What the proxy's main thread did in stalls: ms it ran, and ms it was ready to run but waited
 * for a core (the machine's share: other processes, or the proxy's own collector threads).
 */
function mainThreadShare(gaps: Noted['gaps']): string {
  const sum = (i: 3 | 4) => gaps.reduce((n, g) => n + (g[i] ?? NaN), 0);
  return gaps.length === 0 || Number.isNaN(sum(3))
    ? ''
    : `, its main thread ran ${Math.round(sum(3))} ms and waited for a core ${Math.round(sum(4))} ms`;
}

/** The CPU a process used in its stalls over their length (1: one core busy throughout). */
function cpuShare(gaps: Noted['gaps']): string {
  const wall = gaps.reduce((n, [a, b]) => n + (b - a) / 1000, 0);
  return wall === 0 ? '-' : (gaps.reduce((n, g) => n + (g[2] ?? 0), 0) / wall).toFixed(2);
}
