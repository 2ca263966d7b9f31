import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceText } from '../loops/source-text.js';
import { startUpstreamThread } from './upstream-thread.js';
import { INSPECTOR_URL, openInspector, residentBytes, type ProcessMemory } from './process-memory.js';
import { startChild, stopChild } from './serve-latency.js';
import { body, CAPACITY, MODEL, RESULT_TOKENS, send } from './serve-scale.js';

/*
 * The bench's memory row alone, for a before and after:
 * `npx tsx dev/bench/serve-memory-probe.ts [sessions] [tokens] [CHECKOUT,...] [rounds]`.
 * Each checkout's proxy (in memory, --max-sessions above the sessions) gets the same sessions,
 * the checkouts in turn each round; per session opened: resident as the last request left it,
 * resident and heap+external after a full collection, over the request bytes of one session.
 * PROBE_ENV="NAME=value ..." adds to the proxies' environment, PROBE_NODE_ARGS="--flag ..." to
 * their node flags; PROBE_SNAPSHOT=1 writes a heap snapshot of each proxy at the end (SIGUSR2,
 * into this checkout's directory). PROBE_SLOPE=1 collects halfway too and prints what each
 * session of the second half added (fixed costs are paid once, in the first half).
 */
const [sessionsArg = '200', tokensArg = '100000', checkoutsArg = process.cwd(), roundsArg = '1'] =
  process.argv.slice(2);
const sessions = Number(sessionsArg);
const tokens = Number(tokensArg);
const rounds = Number(roundsArg);
const checkouts = checkoutsArg.split(',');
// PROBE_SLOPE=1 also collects halfway: the second half's sessions alone, per session.
const slope = process.env.PROBE_SLOPE === '1';
// The proxies inherit this process's environment.
for (const kv of (process.env.PROBE_ENV ?? '').split(/\s+/).filter(Boolean)) {
  // The value may hold '=' itself (NODE_OPTIONS=--max-semi-space-size=32).
  const at = kv.indexOf('=');
  process.env[at < 0 ? kv : kv.slice(0, at)] = at < 0 ? '' : kv.slice(at + 1);
}
// Where the proxies run, and write their heap snapshots.
const HERE = fileURLToPath(new URL('../../', import.meta.url));
const source = sourceText();
const reads = Array.from({ length: Math.round(tokens / RESULT_TOKENS) }, (_, n) =>
  source.read(n, RESULT_TOKENS),
);
const upstream = await startUpstreamThread(5, MODEL);

/** A proxy of `checkout` (its own code, run from this checkout's directory), with its inspector. */
async function start(checkout: string): Promise<{ child: ChildProcess; inspect: string; url: string }> {
  const node = (process.env.PROBE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const args = [...node, '--inspect=127.0.0.1:0', '--heapsnapshot-signal=SIGUSR2', '--import', 'tsx'];
  args.push(
    join(checkout, 'src/bin/compactor.ts'),
    'serve',
    '--port',
    '0',
    '--openai-upstream',
    upstream.url,
  );
  args.push('--capacity', String(CAPACITY), '--max-sessions', String(sessions + 1));
  const ready = new RegExp(`${INSPECTOR_URL.source}[\\s\\S]*serving on (http:\\/\\/\\S+)`);
  const { child, match } = await startChild(args, ready);
  return { child, inspect: match[1]!, url: match[2]! };
}

interface Space {
  space_name: string;
  space_size: number;
  space_used_size: number;
  physical_space_size: number;
}
const SPACES = "process.getBuiltinModule('v8').getHeapSpaceStatistics()";
async function snapshotWritten(dir: string): Promise<void> {
  let last = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 2000));
    const files = readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot'));
    const size = files.reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    if (size > 0 && size === last) return;
    last = size;
  }
}

const kib = (n: number) => Math.round(n / 1024);

/** Resident bytes of a process by kind of mapping (Linux smaps): the brk heap, anonymous, files. */
function residentByKind(pid: number | undefined): Record<string, number> {
  const out: Record<string, number> = { heap: 0, anon: 0, anonLarge: 0, file: 0 };
  let kind = 'anon';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const size = parseInt(head[2]!, 16) - parseInt(head[1]!, 16);
      const name = head[3]!;
      kind = name === '[heap]' ? 'heap' : name === '' ? (size >= 32 << 20 ? 'anonLarge' : 'anon') : 'file';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind]! += Number(rss[1]) * 1024;
  }
  return out;
}
for (let round = 0; round < rounds; round++) {
  for (const cwd of checkouts) {
    const proxy = await start(cwd);
    const inspector = await openInspector(proxy.inspect);
    const target = { name: cwd, url: `${proxy.url}/v1`, headers: {} };
    try {
      await send(target, body(reads, 'warm', 10_000, 0));
      const before = await inspector.memoryAfterCollection(proxy.child.pid);
      const kindsBefore = residentByKind(proxy.child.pid);
      const spacesBefore = (await inspector.evaluate(SPACES)) as Space[];
      let raw = 0;
      const half = Math.floor(sessions / 2);
      let middle: ProcessMemory | undefined;
      for (let s = 0; s < sessions; s++) {
        if (slope && s === half) middle = await inspector.memoryAfterCollection(proxy.child.pid);
        const text = body(reads, `m${s}`, tokens, 0);
        raw += Buffer.byteLength(text);
        await send(target, text);
      }
      const uncollected = residentBytes(proxy.child.pid);
      const after = await inspector.memoryAfterCollection(proxy.child.pid);
      const kindsAfter = residentByKind(proxy.child.pid);
      const total = (await inspector.evaluate('process.memoryUsage().heapTotal')) as number;
      const held = (m: ProcessMemory) => m.heapUsed + m.external;
      const per = raw / sessions;
      const row = {
        raw: per,
        resident: (uncollected - before.rss) / sessions,
        collected: (after.rss - before.rss) / sessions,
        held: (held(after) - held(before)) / sessions,
        arrayBuffers: (after.arrayBuffers - before.arrayBuffers) / sessions,
      };
      const over = (n: number) => (n / per).toFixed(2);
      console.log(
        `${cwd} round ${round}: raw ${kib(per)} KiB; resident ${kib(row.resident)} (${over(row.resident)}x); after GC ${kib(row.collected)} (${over(row.collected)}x); heap+ext ${kib(row.held)} (${over(row.held)}x); arrayBuffers ${kib(row.arrayBuffers)}; heap total - used ${kib((total - after.heapUsed) / sessions)}`,
      );
      console.log(
        '  resident by mapping: ' +
          Object.keys(kindsAfter)
            .map((k) => `${k} ${kib((kindsAfter[k]! - kindsBefore[k]!) / sessions)}`)
            .join(', ') +
          ' KiB per session',
      );
      if (middle !== undefined) {
        // What each session of the second half added: costs fixed in number (the kept bodies'
        // budget, caches, code) are paid in the first half.
        const added = (m: ProcessMemory) => m.heapUsed + m.external;
        const n = sessions - half;
        console.log(
          `  slope over the second half: after GC ${kib((after.rss - middle.rss) / n)} (${over((after.rss - middle.rss) / n)}x); heap+ext ${kib((added(after) - added(middle)) / n)} (${over((added(after) - added(middle)) / n)}x)`,
        );
      }
      const spacesAfter = (await inspector.evaluate(SPACES)) as Space[];
      for (const a of spacesAfter) {
        const b = spacesBefore.find((x) => x.space_name === a.space_name)!;
        const d = (k: keyof Space) => kib(((a[k] as number) - (b[k] as number)) / sessions);
        console.log(
          `  ${a.space_name}: size ${d('space_size')} used ${d('space_used_size')} physical ${d('physical_space_size')} KiB per session`,
        );
      }
      if (process.env.PROBE_SNAPSHOT === '1') {
        proxy.child.kill('SIGUSR2');
        // Written on the proxy's main thread once the signal is seen: wait until its file stops growing.
        await snapshotWritten(HERE);
        console.log(`snapshot of ${cwd} written in ${HERE}`);
      }
    } finally {
      await inspector.close();
      await stopChild(proxy.child);
    }
  }
}
await upstream.close();
