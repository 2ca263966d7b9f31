import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { loopScript } from '../clients/tool-loop.js';
import { sourceText } from '../loops/source-text.js';
import { freePort, GATEWAY, percentile, serveFromCheckout, startChild, stopChild } from './serve-latency.js';
import { CAPACITY, cell, RESULT_TOKENS, type Target } from './serve-scale.js';

/*
 * One cell of the bench by history size, with the CPU each proxy spent per counted request:
 * `npx tsx dev/bench/serve-cell-probe.ts [tokens] [sessions] [turns] [rounds] [memory,data-dir] [OTHER_CHECKOUT] [PROFILE_DIR]`.
 * Every body goes to direct, each proxy and Portkey's gateway in turn, as in the bench; the cell
 * runs `rounds` times with fresh sessions (the first round warms every path and is not counted).
 * With another checkout its proxies get the same bodies in the same rounds (a before and after).
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
const source = sourceText();
const reads = Array.from({ length: Math.round(tokens / RESULT_TOKENS) + turns + 1 }, (_, n) =>
  source.read(n, RESULT_TOKENS),
);
const upstream = await startAgentUpstream({
  window: 'unchecked-overflow-test',
  script: loopScript(5),
  countUsage: false,
});
/** CPU ms a process has used so far (user and system, from /proc; clock ticks of 10 ms). */
const cpuMs = (pid: number | undefined) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const dirs: string[] = [];
const proxies: Array<{ name: string; pid: number | undefined; stop: () => Promise<void> }> = [];
const targets: Target[] = [{ name: 'direct', url: upstream.url, headers: {} }];
const checkouts =
  other === undefined || other === '' || other === '-'
    ? [['this', '']]
    : [
        ['this', ''],
        ['other', `${other}/`],
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
      const p = await serveFromCheckout(
        checkout!,
        [
          ...['--openai-upstream', upstream.url, '--capacity', String(CAPACITY)],
          ...(mode === 'data-dir' ? ['--data-dir', dir] : []),
        ],
        prof,
      );
      proxies.push({ name, pid: p.child.pid, stop: () => stopChild(p.child) });
      targets.push({ name, url: `${p.match[1]}/v1`, headers: {} });
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

/** Runs the rounds and prints each target's latency and each process's CPU per request. */
async function measure(gatewayPid: number | undefined): Promise<void> {
  const all = [...proxies, { name: 'Portkey', pid: gatewayPid }];
  const times = new Map(targets.map((t) => [t.name, [] as number[]]));
  const cpu = new Map<string, number>();
  for (let r = 0; r < rounds; r++) {
    let before: number[] = [];
    const out = await cell(targets, reads, `r${r}`, tokens, sessions, turns, () => {
      before = all.map((p) => cpuMs(p.pid));
    });
    upstream.turns.length = 0;
    upstream.requests.length = 0;
    const used = all.map((p, i) => cpuMs(p.pid) - before[i]!);
    console.log(
      `round ${r}: cpu ms/request ${all.map((p, i) => `${p.name} ${(used[i]! / (sessions * turns)).toFixed(1)}`).join(', ')}`,
    );
    if (r === 0) continue;
    all.forEach((p, i) => cpu.set(p.name, (cpu.get(p.name) ?? 0) + used[i]!));
    for (const [name, l] of out.times) times.get(name)!.push(...l);
  }
  const direct = times.get('direct')!;
  const portkey = times.get('Portkey')!;
  const added = (l: number[], p: number) => percentile(l, p) - percentile(direct, p);
  for (const [name, l] of times) {
    const c = cpu.get(name);
    console.log(
      name.padEnd(16),
      `n ${l.length}`,
      `p50 ${percentile(l, 50).toFixed(2)}`,
      `p99 ${percentile(l, 99).toFixed(2)}`,
      name === 'direct'
        ? ''
        : `added p50 ${added(l, 50).toFixed(2)} p99 ${added(l, 99).toFixed(2)} vs Portkey p50 ${(added(l, 50) / added(portkey, 50)).toFixed(2)}`,
      c === undefined ? '' : `cpu ms/request ${(c / l.length).toFixed(2)}`,
    );
  }
}
