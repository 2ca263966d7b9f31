import { Agent, request } from 'undici';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { loopScript } from '../clients/tool-loop.js';
import { sourceText } from '../loops/source-text.js';
import { processCpuMs, serveFromCheckout, stopChild } from './serve-latency.js';
import { body as scaleBody, RESULT_TOKENS } from './serve-scale.js';

/*
 * CPU the proxy spends per request by history size, one session at a time, no session header
 * (the session index finds it): `npx tsx dev/bench/serve-cpu-probe.ts [turns] [PROFILE_DIR|-] [sizes in k,
 * e.g. 10,200] [OTHER_CHECKOUT]`. With a directory, each proxy writes a CPU profile there
 * (this/, other/); with
 * another checkout, its proxy gets the same bodies in the same rounds (a before and after in one
 * run). Bodies as the serve bench sends them.
 */
const [turnsArg = '10', profileDir, sizesArg = '10,50,100,200', other] = process.argv.slice(2);
const turns = Number(turnsArg);
const SIZES = sizesArg.split(',').map((k) => Number(k) * 1000);
const source = sourceText();
const reads = Array.from({ length: 120 }, (_, n) => source.read(n, RESULT_TOKENS));
// Bodies as the serve bench sends them.
const body = (session: string, tokens: number, turn: number) => scaleBody(reads, session, tokens, turn);

const upstream = await startAgentUpstream({
  window: 'unchecked-overflow-test',
  script: loopScript(20),
  countUsage: false,
  keep: false, // a kept body per request would fill this process's heap
});
/** `compactor serve` from a checkout's src/ against the fake upstream, with `node` flags before it. */
const serveFrom = (checkout: string, node: string[] = []) =>
  serveFromCheckout(checkout, ['--openai-upstream', upstream.url, '--capacity', '1000000'], node);
/** Node flags that write a proxy's CPU profile under the profile directory, in `sub`. */
const profiled = (sub: string) =>
  profileDir !== undefined && profileDir !== '-' ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${sub}`] : [];
const proxies = [
  { name: 'this tree', ...(await serveFrom('', profiled('this'))) },
  ...(other === undefined ? [] : [{ name: other, ...(await serveFrom(`${other}/`, profiled('other'))) }]),
];
const client = new Agent({ connections: 4 });
const send = async (url: string, text: string) => {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
    body: text,
    dispatcher: client,
  });
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
};
try {
  for (const p of proxies) {
    await send(p.match[1], body('warm', 10_000, 0));
    await send(p.match[1], body('warm', 10_000, 1));
  }
  for (const tokens of SIZES) {
    const session = `s${tokens}`;
    const used = proxies.map(() => 0);
    for (const p of proxies) await send(p.match[1], body(session, tokens, 0));
    for (let t = 1; t <= turns; t++)
      for (const [i, p] of proxies.entries()) {
        const start = processCpuMs(p.child.pid);
        await send(p.match[1], body(session, tokens, t));
        used[i] += processCpuMs(p.child.pid) - start;
      }
    const kib = (Buffer.byteLength(body(session, tokens, 1)) / 1024).toFixed(0);
    const cells = proxies.map((p, i) => `${p.name} ${(used[i] / turns).toFixed(1)}`);
    console.log(`${tokens / 1000}k (${kib} KiB body): cpu ms/request ${cells.join(', ')}`);
    upstream.turns.length = 0;
    upstream.requests.length = 0;
  }
} finally {
  for (const p of proxies) await stopChild(p.child);
  await upstream.close();
  await client.close();
}
