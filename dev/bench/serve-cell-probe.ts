import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { loopScript } from '../clients/tool-loop.js';
import { STALL_PROBE, STALL_READ, STALL_RESET, type Noted } from './loop-stalls.js';
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
import { CAPACITY, cell, cellReads, type Target } from './serve-scale.js';

/*
 * One cell of the bench by history size, with what each proxy spent per counted request:
 * `npx tsx dev/bench/serve-cell-probe.ts [tokens] [sessions] [turns] [rounds] [memory,data-dir] [OTHER_CHECKOUT] [PROFILE_DIR]`.
 * Every body goes to direct, each proxy and Portkey's gateway in turn, as in the bench; the cell
 * runs `rounds` times with fresh sessions (the first round warms every path and is not counted).
 * With another checkout its proxies get the same bodies in the same rounds (a before and after).
 * Per proxy: CPU and minor page faults (fresh memory touched) per request from /proc, and through its inspector its garbage collections and
 * its longest stretch without a turn of the event loop.
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
const upstream = await startAgentUpstream({
  window: 'unchecked-overflow-test',
  script: loopScript(5),
  countUsage: false,
});

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
  stallLongest: number;
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
      const prof =
        profileDir === undefined
          ? []
          : ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${name.replace(' ', '-')}`];
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
  await measure(gateway.child.pid);
} finally {
  for (const p of proxies) await p.stop();
  if (gateway !== undefined) await stopChild(gateway.child);
  await upstream.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/** A proxy's collections and longest loop stall since the round's sessions were all open. */
async function stallsOf(p: Proxy): Promise<Stalls> {
  const noted = (await p.inspector!.evaluate(STALL_READ)) as Noted;
  return {
    gcCount: noted.gc.length,
    gcMs: noted.gc.reduce((a, b) => a + b, 0),
    gcLongest: Math.max(0, ...noted.gc),
    stallLongest: Math.max(0, ...noted.gaps.map(([a, b]) => (b - a) / 1000)),
  };
}

/** Collections per request and the longest stall, in words. */
function stallText(s: Stalls, requests: number): string {
  return (
    `GC ${(s.gcCount / requests).toFixed(2)}/request ${(s.gcMs / requests).toFixed(1)} ms/request ` +
    `(longest ${Math.round(s.gcLongest)}), longest loop stall ${Math.round(s.stallLongest)} ms`
  );
}

/** Runs the rounds and prints each target's latency and each process's CPU per request. */
async function measure(gatewayPid: number | undefined): Promise<void> {
  const all: Proxy[] = [...proxies, { name: 'Portkey', pid: gatewayPid, stop: async () => {} }];
  const times = new Map(targets.map((t) => [t.name, [] as number[]]));
  const failed = new Map<string, number>();
  const cpu = new Map<string, number>();
  const faults = new Map<string, number>();
  const stalls = new Map<string, Stalls>();
  const perRound = sessions * turns;
  for (let r = 0; r < rounds; r++) {
    let before: number[] = [];
    let faultsBefore: number[] = [];
    const out = await cell(targets, reads, `r${r}`, tokens, sessions, turns, async () => {
      for (const p of proxies) await p.inspector!.evaluate(STALL_RESET);
      before = all.map((p) => processCpuMs(p.pid));
      faultsBefore = all.map((p) => processFaults(p.pid));
    });
    upstream.turns.length = 0;
    upstream.requests.length = 0;
    const used = all.map((p, i) => processCpuMs(p.pid) - before[i]!);
    const faulted = all.map((p, i) => processFaults(p.pid) - faultsBefore[i]!);
    const noted = await Promise.all(proxies.map(stallsOf));
    console.log(
      `round ${r}: cpu ms/request ${all.map((p, i) => `${p.name} ${(used[i]! / perRound).toFixed(1)}`).join(', ')}`,
    );
    proxies.forEach((p, i) => console.log(`  ${p.name.padEnd(16)} ${stallText(noted[i]!, perRound)}`));
    if (r === 0) continue;
    all.forEach((p, i) => cpu.set(p.name, (cpu.get(p.name) ?? 0) + used[i]!));
    all.forEach((p, i) => faults.set(p.name, (faults.get(p.name) ?? 0) + faulted[i]!));
    proxies.forEach((p, i) => {
      const s = noted[i]!;
      const was = stalls.get(p.name) ?? { gcCount: 0, gcMs: 0, gcLongest: 0, stallLongest: 0 };
      stalls.set(p.name, {
        gcCount: was.gcCount + s.gcCount,
        gcMs: was.gcMs + s.gcMs,
        gcLongest: Math.max(was.gcLongest, s.gcLongest),
        stallLongest: Math.max(was.stallLongest, s.stallLongest),
      });
    });
    for (const [name, l] of out.times) times.get(name)!.push(...l);
    for (const [name, n] of out.failed) failed.set(name, (failed.get(name) ?? 0) + n);
  }
  const direct = times.get('direct')!;
  const portkey = times.get('Portkey')!;
  const added = (l: number[], p: number) => percentile(l, p) - percentile(direct, p);
  const counted = perRound * (rounds - 1);
  for (const [name, l] of times) {
    const c = cpu.get(name);
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
        c === undefined ? '' : `cpu ms/request ${(c / counted).toFixed(2)}`,
        f === undefined ? '' : `page faults/request ${Math.round(f / counted)}`,
        s === undefined ? '' : stallText(s, counted),
        lost === undefined ? '' : `failed ${lost}`,
      ]
        .filter((x) => x !== '')
        .join(' '),
    );
  }
}
