/**
 * What a request costs through `compactor serve --engine restate`: one proxy (in this process),
 * one worker over HTTP/1.1 and a real Restate server, SESSIONS agent sessions of STEPS requests
 * at once (each step a tool call and a 3,000-token result, so each session compacts). Prints
 * each request's time through the proxy at the median and the 90th percentile, the CPU time
 * the worker, the Restate server and this process (proxy, client, fake model) used, and how
 * many calls each handler of the conversation and session objects ran. Run it from two trees in
 * turn to compare them: `npx tsx dev/restate/proxy-probe.ts [sessions] [steps]`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startServer } from '../../src/serve/index.js';
import { freeEncoders } from '../../src/estimate/index.js';
import { startFakeAgentUpstream } from '../fakes/agent-upstream.js';
import { RestateServer, restateInstall, startWorker, stopWorker } from './harness.js';

const SESSIONS = Number(process.argv[2] ?? 4);
const STEPS = Number(process.argv[3] ?? 15);
const WINDOW = 16_000;
const READ_TOOL = { name: 'read', input_schema: { type: 'object', properties: {} } };

const step = (i: number, n: number) => [
  { role: 'assistant', content: [{ type: 'tool_use', id: `s${i}c${n}`, name: 'read', input: { n } }] },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: `s${i}c${n}`,
        content: `session ${i} file ${n}: ${'lorem ipsum dolor '.repeat(1000)}`,
      },
    ],
  },
];

/** CPU seconds (user and system) each child of this process has used, by its command name. */
function childCpu(): Record<string, number> {
  const tick = 100; // USER_HZ on Linux
  const out: Record<string, number> = {};
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) !== process.pid) continue;
    // The worker is the only Node child (its main thread names the process).
    const who = name === 'MainThread' || name === 'node' ? 'worker' : name;
    if (who === 'esbuild') continue;
    out[who] = (out[who] ?? 0) + (Number(fields[11]) + Number(fields[12])) / tick;
  }
  return out;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const install = restateInstall();
  if (install === null) throw new Error('no Restate install (see dev/restate/harness.ts)');
  const upstream = await startFakeAgentUpstream({ window: WINDOW });
  const restate = new RestateServer(install);
  await restate.start();
  const route = { provider: 'openai', model: 'gpt-4o', baseUrl: upstream.url, apiKeyEnv: 'PROBE_KEY' };
  const worker = await startWorker(install, { WORKER_ROUTE: JSON.stringify(route), PROBE_KEY: 'sk-probe' });
  await restate.register(`http://127.0.0.1:${worker.port}`);
  // Clearing off, so each session compacts as it grows.
  const policy = { enabled: false, clearWhenPassBuysFewerTurns: 0 };
  const restateEngine = { engine: 'restate', restateIngress: restate.ingress } as const;
  const proxy = await startServer({
    ...restateEngine,
    port: 0,
    capacity: WINDOW,
    anthropicUpstream: upstream.url,
    session: { policy },
  });
  const times: number[] = [];
  try {
    const drive = async (i: number) => {
      const messages: unknown[] = [{ role: 'user', content: `Session ${i}: read every file and report.` }];
      for (let n = 0; n < STEPS; n++) {
        messages.push(...step(i, n));
        const started = performance.now();
        const res = await fetch(`${proxy.url}/v1/messages`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': 'sk-client',
            'x-compactor-session': `probe-${i}`,
            'x-test-loop': `s${i}`,
            'x-test-step': String(n),
            'x-test-steps': '100',
          },
          body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 256, tools: [READ_TOOL], messages }),
        });
        const text = await res.text();
        times.push(performance.now() - started);
        if (res.status !== 200)
          throw new Error(`session ${i} step ${n}: ${res.status} ${text.slice(0, 200)}`);
      }
    };
    const [cpuBefore, ownBefore] = [childCpu(), process.cpuUsage()];
    await Promise.all(Array.from({ length: SESSIONS }, (_, i) => drive(i)));
    const [cpuAfter, own] = [childCpu(), process.cpuUsage(ownBefore)];
    const cpu = Object.entries(cpuAfter)
      .map(([name, s]) => `${name} ${(s - (cpuBefore[name] ?? 0)).toFixed(2)} s`)
      .join(', ');
    const sorted = [...times].sort((a, b) => a - b);
    const rows = await restate.query<{ target_service_name: string; target_handler_name: string; n: number }>(
      'SELECT target_service_name, target_handler_name, count(*) AS n FROM sys_invocation GROUP BY target_service_name, target_handler_name',
    );
    const calls = rows
      .map((r) => `${r.target_service_name}/${r.target_handler_name} ${r.n}`)
      .sort()
      .join(', ');
    process.stdout.write(
      `${SESSIONS} sessions x ${STEPS} requests: median ${percentile(sorted, 50).toFixed(0)} ms, p90 ${percentile(sorted, 90).toFixed(0)} ms; cpu: ${cpu}, proxy ${((own.user + own.system) / 1e6).toFixed(2)} s; calls: ${calls}\n`,
    );
  } finally {
    await proxy.close();
    await stopWorker(worker);
    await restate.dispose();
    await upstream.close();
    freeEncoders();
  }
}

await main();
