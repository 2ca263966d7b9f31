import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { loopScript } from '../clients/tool-loop.js';
import { STALL_PROBE, STALL_READ, STALL_RESET, type Noted } from './loop-stalls.js';
import { INSPECTOR_URL, openInspector, type Inspector } from './process-memory.js';
import { percentile, startChild, stopChild } from './serve-latency.js';
import { body, CAPACITY, cellReads, openingGate, send } from './serve-scale.js';

/*
 * One cell of the serve bench by history size, this tree against another checkout in the same
 * run: `npx tsx dev/bench/serve-tail.ts [tokens] [sessions] [turns] [rounds] [OTHER_CHECKOUT]
 * [memory|data-dir]`. Every body goes direct and to each proxy in turn (the order rotates per
 * request, as in the bench), so both proxies see the same load. Per round and proxy: p50, p99,
 * p99 / p50, the CPU it spent per counted request, and its garbage collections.
 */
const args = process.argv.slice(2);
const [tokens, sessions, turns, rounds] = [200_000, 50, 3, 3].map((d, i) =>
  args[i] === undefined ? d : Number(args[i]),
) as [number, number, number, number];
const other = args[4];
const mode = args[5] ?? 'memory';

/** CPU ms a process has used so far (from /proc, clock ticks of 10 ms). */
const cpuMs = (pid: number | undefined) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

const reads = cellReads(tokens, turns);
const upstream = await startAgentUpstream({
  window: 'unchecked-overflow-test',
  script: loopScript(5),
  countUsage: false,
});

interface Proxy {
  name: string;
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
  inspector?: Inspector;
}

async function proxyFrom(name: string, checkout: string): Promise<Proxy> {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-tail-'));
  const p = await startChild(
    [
      ...['--inspect=127.0.0.1:0', '--import', 'tsx', `${checkout}src/bin/compactor.ts`, 'serve'],
      ...['--port', '0', '--openai-upstream', upstream.url, '--capacity', String(CAPACITY)],
      ...(mode === 'data-dir' ? ['--data-dir', dir] : []),
    ],
    new RegExp(`${INSPECTOR_URL.source}[\\s\\S]*serving on (http:\\/\\/\\S+)`),
  );
  const inspector = await openInspector(p.match[1]!);
  await inspector.evaluate(STALL_PROBE);
  return {
    name,
    url: `${p.match[2]}/v1`,
    pid: p.child.pid,
    inspector,
    async stop() {
      await inspector.close();
      await stopChild(p.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const proxies = [await proxyFrom('this tree', '')];
if (other !== undefined) proxies.push(await proxyFrom(other, `${other.replace(/\/$/, '')}/`));
const targets = [{ name: 'direct', url: upstream.url, pid: undefined, stop: async () => {} }, ...proxies];
const at = (t: { name: string; url: string }) => ({ name: t.name, url: t.url, headers: {} });

try {
  for (const p of proxies) await send(at(p), body(reads, 'warm', 10_000, 0));
  for (let round = 0; round < rounds; round++) {
    const times = new Map(targets.map((t) => [t.name, [] as number[]]));
    const cpuAtOpen = new Map<string, number>();
    const allOpen = openingGate(sessions, async () => {
      for (const p of proxies) {
        await p.inspector!.evaluate(STALL_RESET);
        cpuAtOpen.set(p.name, cpuMs(p.pid));
      }
    });
    await Promise.all(
      Array.from({ length: sessions }, async (_, s) => {
        for (let turn = 0; turn <= turns; turn++) {
          if (turn === 1) await allOpen();
          const text = body(reads, `r${round}-s${s}`, tokens, turn);
          for (let k = 0; k < targets.length; k++) {
            const t = targets[(k + turn + s) % targets.length]!;
            const ms = await send(at(t), text);
            if (turn > 0) times.get(t.name)!.push(ms);
          }
        }
      }),
    );
    upstream.turns.length = 0;
    upstream.requests.length = 0;
    const counted = sessions * turns;
    for (const t of targets) {
      const ms = times.get(t.name)!;
      const [p50, p99] = [percentile(ms, 50), percentile(ms, 99)];
      let extra = '';
      if (t.pid !== undefined) {
        const cpu = (cpuMs(t.pid) - cpuAtOpen.get(t.name)!) / counted;
        const noted = (await (t as Proxy).inspector!.evaluate(STALL_READ)) as Noted;
        const gcTotal = noted.gc.reduce((a, b) => a + b, 0);
        const longestGap = Math.max(0, ...noted.gaps.map(([a, b]) => (b - a) / 1000));
        extra = `, cpu ${cpu.toFixed(1)} ms/request, GC ${noted.gc.length} pauses ${Math.round(gcTotal)} ms (longest ${Math.round(Math.max(0, ...noted.gc))}), longest loop stall ${Math.round(longestGap)} ms`;
      }
      console.log(
        `round ${round + 1} ${t.name.padEnd(16)} p50 ${Math.round(p50)} ms, p99 ${Math.round(p99)} ms, p99/p50 ${(p99 / p50).toFixed(2)}${extra}`,
      );
    }
  }
} finally {
  for (const p of proxies) await p.stop();
  await upstream.close();
}
