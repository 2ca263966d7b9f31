import { runHttpLoop } from '../clients/http-loop.js';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { loopScript } from '../clients/tool-loop.js';
import { sourceText } from '../loops/source-text.js';
import {
  freePort,
  GATEWAY,
  percentile,
  processCpuMs,
  serveFromCheckout,
  startChild,
  stopChild,
} from './serve-latency.js';

/*
 * Profiles `compactor serve` (from src/, as the bench starts it) on the bench's small-history
 * loop, beside direct and Portkey's gateway in alternating rounds:
 * `npx tsx dev/bench/serve-profile.ts OUTDIR [sessions] [rounds] [stream|json] [OTHER_CHECKOUT]`.
 * The proxy's CPU profile lands in OUTDIR (open it in Chrome's DevTools); with another
 * checkout, its proxy runs too, in the same rounds (a before and after in one run).
 */
const [dir = '/tmp', sessions = '1', rounds = '10', stream = '', other] = process.argv.slice(2);
const turns = 20;
const upstream = await startAgentUpstream({
  window: 'unchecked-overflow-test',
  script: loopScript(turns),
  countUsage: false,
});
const source = sourceText();
const reads = Array.from({ length: turns }, (_, n) => source.read(n, 1_000));
/** `compactor serve` from `checkout`'s src/ against the fake upstream, with `node` flags before it. */
const serveFrom = (checkout: string, node: string[] = []) =>
  serveFromCheckout(checkout, ['--openai-upstream', upstream.url], node);
const proxy = await serveFrom('', ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
const before = other === undefined ? undefined : await serveFrom(`${other}/`);
const port = await freePort();
const gateway = await startChild(
  [
    ...(stream === 'stream' ? ['--import', './dev/bench/portkey-stream-headers.mjs'] : []),
    GATEWAY,
    `--port=${port}`,
    '--headless',
  ],
  /Ready for connections/,
);
const targets = [
  { name: 'direct', base: upstream.url, headers: (_: string): Record<string, string> => ({}) },
  { name: 'serve', base: `${proxy.match[1]}/v1`, headers: (s: string) => ({ 'x-compactor-session': s }) },
  ...(before === undefined
    ? []
    : [
        {
          name: 'serve before',
          base: `${before.match[1]}/v1`,
          headers: (s: string) => ({ 'x-compactor-session': s }),
        },
      ]),
  {
    name: 'portkey',
    base: `http://127.0.0.1:${port}/v1`,
    headers: () => ({ 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream.url }),
  },
];
const pids = new Map<string, number | undefined>([
  ['serve', proxy.child.pid],
  ['serve before', before?.child.pid],
  ['portkey', gateway.child.pid],
]);
const cpu = new Map<string, number>();
const lat = new Map(targets.map((t) => [t.name, [] as number[]]));
try {
  for (let r = 0; r < Number(rounds); r++)
    for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
      const pid = pids.get(t.name);
      const cpuBefore = pid === undefined || r === 0 ? 0 : processCpuMs(pid);
      const results = await Promise.all(
        Array.from({ length: Number(sessions) }, (_, i) => {
          const label = `p-${t.name}-${r}-${i}`;
          return runHttpLoop({
            baseUrl: t.base,
            protocol: 'openai-chat',
            model: 'gpt-4.1',
            read: (n) => reads[n],
            headers: t.headers(label),
            maxTurns: turns + 2,
            label,
            stream: stream === 'stream',
          });
        }),
      );
      if (pid !== undefined && r > 0) cpu.set(t.name, (cpu.get(t.name) ?? 0) + processCpuMs(pid) - cpuBefore);
      // The first round warms every path.
      if (r > 0)
        lat.get(t.name)!.push(...results.flatMap((x) => (stream === 'stream' ? x.firstEvents : x.latencies)));
    }
  const d = lat.get('direct')!;
  for (const [name, l] of lat) {
    const p50 = percentile(l, 50);
    const p99 = percentile(l, 99);
    const added = name === 'direct' ? '' : `added p50 ${(p50 - percentile(d, 50)).toFixed(2)}`;
    const p = lat.get('portkey')!;
    const vs =
      name === 'direct'
        ? ''
        : `vs Portkey p50 ${(p50 / percentile(p, 50)).toFixed(2)} p99 ${(p99 / percentile(p, 99)).toFixed(2)}`;
    const perRequest = cpu.has(name) ? `cpu ms/request ${(cpu.get(name)! / l.length).toFixed(2)}` : '';
    console.log(
      perRequest.padEnd(22),
      name.padEnd(13),
      'n',
      l.length,
      'p50',
      p50.toFixed(2),
      'p99',
      p99.toFixed(2),
      'p99/p50',
      (p99 / p50).toFixed(2),
      added,
      vs,
    );
  }
} finally {
  await stopChild(proxy.child);
  if (before !== undefined) await stopChild(before.child);
  await stopChild(gateway.child);
  await upstream.close();
}
