import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { runHttpLoop, type HttpLoopResult } from '../clients/http-loop.js';
import type { AgentUpstream } from '../fakes/agent-upstream.js';
import { sourceText } from '../loops/source-text.js';
import { INSPECTOR_URL } from './process-memory.js';
import type { BenchContext, BenchSection } from './types.js';

/*
 * `compactor serve` under load: many plain agent loops at once (Chat Completions, whole history
 * resent every turn) against the same fake model directly, through the proxy (its own process,
 * as `compactor serve` runs), and through Portkey's gateway doing passthrough, in one run, once
 * with plain JSON replies and once streamed. Added latency is always against the direct calls of
 * the same run, so a busy machine shows up as slower everywhere, not as a worse proxy.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODEL = 'gpt-4.1';
export const GATEWAY = 'node_modules/@portkey-ai/gateway/build/start-server.js';
/** The fake model's pause before each streamed event after the first. */
export const STREAM_EVENT_GAP_MS = 2;

/** Makes the gateway's streaming path work; why is in the file. */
const GATEWAY_STREAM_FIX = './dev/bench/portkey-stream-headers.mjs';

export type LoadMode = 'json' | 'stream';

/** How big a latency run is; the bench's own sizes unless a test asks for a small one. */
export interface LatencyOptions {
  turns: number;
  resultTokens: number;
  levels: number[];
  /** Start the gateway with its streaming fix (default); off shows what it does without. */
  fixGatewayStreaming?: boolean;
}

/** A port nothing listens on now (the gateway cannot be asked for port 0). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Starts a child and resolves once its output contains `ready` (its text, for a URL in it). */
export function startChild(
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    // Once ready, the child's output is only drained: a proxy that logs every request must
    // never wait on a full pipe because the bench held its output (its writes to a pipe block).
    let started = false;
    // PROBE_CHILD_LOG=prefix: all of a child's output goes on to prefix.<pid> too (--trace-gc's).
    const log = process.env.PROBE_CHILD_LOG;
    const onData = (c: Buffer) => {
      if (log) appendFileSync(`${log}.${child.pid}`, c);
      if (started) return;
      out += c.toString('utf8');
      const m = out.match(ready);
      if (m) {
        started = true;
        resolve({ child, match: m });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited ${code} before it was ready: ${out.slice(-500)}`)),
    );
  });
}

/** Node's arguments for `compactor serve` from a checkout's src/, `node` flags before it. */
const serveArgs = (checkout: string, args: string[], node: string[]) => [
  ...node,
  ...['--import', 'tsx', `${checkout}src/bin/compactor.ts`, 'serve', '--port', '0', ...args],
];

/** `compactor serve` from a checkout's src/ (`''` for this one) with `args`, `node` flags before it. */
export function serveFromCheckout(checkout: string, args: string[], node: string[] = []) {
  return startChild(serveArgs(checkout, args, node), /serving on (http:\/\/\S+)/);
}

/** The same with its inspector open on a port the OS picks: the proxy's URL and the inspector's. */
export async function serveInspected(checkout: string, args: string[], node: string[] = []) {
  const p = await startChild(
    serveArgs(checkout, args, ['--inspect=127.0.0.1:0', ...node]),
    new RegExp(`${INSPECTOR_URL.source}[\\s\\S]*serving on (http:\\/\\/\\S+)`),
  );
  return { child: p.child, url: p.match[2]!, inspectorUrl: p.match[1]! };
}

/**
 * CPU ms a process has used so far (user and system, from /proc; clock ticks of 10 ms); with
 * `mainThread`, only its main thread's (the event loop's, without the thread pool and workers).
 */
export function processCpuMs(pid: number | undefined, mainThread = false): number {
  const stat = mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Minor page faults of a process so far (from /proc): each is fresh memory it touched. */
export function processFaults(pid: number | undefined): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[7]);
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface Target {
  name: string;
  baseUrl: string;
  headers: (session: string) => Record<string, string>;
  /** The modes this target is measured in (a target whose streaming failed is left out of it). */
  modes: LoadMode[];
}

/** p-th percentile (nearest rank) of a list. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export interface LoadRow {
  mode: LoadMode;
  concurrency: number;
  target: string;
  requests: number;
  p50: number;
  p99: number;
  rps: number;
  /** Streamed only: time to the first event. */
  firstP50: number;
  firstP99: number;
  eventsPerReply: number;
}

/** A one-line note on what could not run; `mode` when it concerns one table only. */
export interface LoadNote {
  mode?: LoadMode;
  text: string;
}

/** The first line of an error, for a one-line note. */
const firstLine = (e: unknown) => String((e as Error).message ?? e).split('\n')[0];

/** Starts the proxy and the gateway; whatever cannot run is left out with a one-line note. */
async function startTargets(upstream: AgentUpstream, o: LatencyOptions, notes: LoadNote[]) {
  const children: ChildProcess[] = [];
  const targets: Target[] = [
    { name: 'direct', baseUrl: upstream.url, headers: () => ({}), modes: ['json', 'stream'] },
  ];
  const proxy = await startChild(
    ['--import', 'tsx', 'src/bin/compactor.ts', 'serve', '--port', '0', '--openai-upstream', upstream.url],
    /serving on (http:\/\/\S+)/,
  );
  children.push(proxy.child);
  targets.push({
    name: 'compactor serve',
    baseUrl: `${proxy.match[1]}/v1`,
    headers: (session) => ({ 'x-compactor-session': session }),
    modes: ['json', 'stream'],
  });
  try {
    const port = await freePort();
    const gateway = await startChild(
      [
        ...(o.fixGatewayStreaming === false ? [] : ['--import', GATEWAY_STREAM_FIX]),
        GATEWAY,
        `--port=${port}`,
        '--headless',
      ],
      /Ready for connections/,
    );
    children.push(gateway.child);
    targets.push({
      name: 'Portkey gateway',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      headers: () => ({ 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream.url }),
      modes: ['json', 'stream'],
    });
  } catch (e) {
    notes.push({ text: `Portkey gateway not measured: it did not start (${firstLine(e)}).` });
  }
  return { targets, stop: () => Promise.all(children.map(stopChild)) };
}

/** One loop of one session through one target. */
function loop(
  t: Target,
  mode: LoadMode,
  o: LatencyOptions,
  reads: string[],
  session: string,
): Promise<HttpLoopResult> {
  return runHttpLoop({
    baseUrl: t.baseUrl,
    protocol: 'openai-chat',
    model: MODEL,
    read: (n) => reads[n],
    headers: t.headers(session),
    maxTurns: o.turns + 2,
    label: session,
    stream: mode === 'stream',
  });
}

/**
 * Warms every path (module loading, first connections) before anything is timed. A target whose
 * streamed loop fails here is measured without streaming, with a one-line note saying why.
 */
async function warm(targets: Target[], o: LatencyOptions, reads: string[], notes: LoadNote[]) {
  for (const t of targets)
    for (const mode of [...t.modes]) {
      try {
        await loop(t, mode, o, reads, `warm-${mode}-${t.name}`);
      } catch (e) {
        if (mode === 'json' || t.name === 'direct') throw e;
        t.modes = t.modes.filter((m) => m !== mode);
        notes.push({
          mode,
          text: `${t.name} not measured streaming: a streamed request through it failed (${firstLine(e)}).`,
        });
      }
    }
}

interface Samples {
  results: HttpLoopResult[];
  ms: number;
}

/** All sessions of one concurrency level, every target in both modes, in alternating order. */
async function level(
  concurrency: number,
  targets: Target[],
  o: LatencyOptions,
  reads: string[],
): Promise<LoadRow[]> {
  // Fewer sessions than 10 at a time run in rounds, so every level has enough requests for a p99.
  const rounds = Math.max(1, Math.ceil(10 / concurrency));
  const runs = (['json', 'stream'] as const).flatMap((mode) =>
    targets.filter((t) => t.modes.includes(mode)).map((t) => ({ mode, t })),
  );
  const samples = new Map(runs.map((r) => [r, { results: [], ms: 0 } as Samples]));
  for (let round = 0; round < rounds; round++) {
    // Alternate the order round by round so a busy machine slows every target alike.
    for (const r of round % 2 === 0 ? runs : [...runs].reverse()) {
      const started = performance.now();
      const results = await Promise.all(
        Array.from({ length: concurrency }, (_, i) =>
          loop(r.t, r.mode, o, reads, `bench-${r.mode}-${concurrency}-${round}-${i}`),
        ),
      );
      const s = samples.get(r)!;
      s.ms += performance.now() - started;
      s.results.push(...results);
    }
  }
  return runs.map((r) => {
    const s = samples.get(r)!;
    const latencies = s.results.flatMap((x) => x.latencies);
    const first = s.results.flatMap((x) => x.firstEvents);
    const events = s.results.reduce((n, x) => n + x.events, 0);
    return {
      mode: r.mode,
      concurrency,
      target: r.t.name,
      requests: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      rps: latencies.length / (s.ms / 1000),
      firstP50: first.length ? percentile(first, 50) : NaN,
      firstP99: first.length ? percentile(first, 99) : NaN,
      eventsPerReply: events / latencies.length,
    };
  });
}

/** Runs every level against every target; the rows and the notes on what could not run. */
export async function measureLoad(
  ctx: BenchContext,
  upstream: AgentUpstream,
  o: LatencyOptions,
): Promise<{ rows: LoadRow[]; notes: LoadNote[] }> {
  const source = sourceText();
  const reads = Array.from({ length: o.turns }, (_, n) => source.read(n, o.resultTokens));
  const notes: LoadNote[] = [];
  const { targets, stop } = await startTargets(upstream, o, notes);
  const rows: LoadRow[] = [];
  try {
    await warm(targets, o, reads, notes);
    for (const concurrency of o.levels) {
      rows.push(...(await level(concurrency, targets, o, reads)));
      ctx.log(`bench: serve latency at ${concurrency} concurrent sessions done`);
    }
  } finally {
    await stop();
  }
  for (const n of notes) ctx.log(`bench: ${n.text}`);
  return { rows, notes };
}

/** What the tables say about the run's size and paths. */
function sizeNote(o: LatencyOptions, mode: LoadMode): string {
  return `Each session: a ${o.turns}-step read_file loop with ${o.resultTokens}-token results (${o.turns + 1} requests, history up to ~${(o.turns * o.resultTokens) / 1000}k tokens), ${mode === 'stream' ? 'streamed (`stream: true`, server-sent events)' : 'non-streaming'}, model ${MODEL}; fewer than 10 sessions at a time run in rounds until 10 sessions ran.`;
}

/** The notes that concern a table: its own and those about every table. */
const notesOf = (notes: LoadNote[], mode: LoadMode) =>
  notes.filter((n) => n.mode === undefined || n.mode === mode).map((n) => n.text);

const PATHS_NOTE =
  'direct: the fake model on 127.0.0.1 itself; compactor serve: `compactor serve` in its own process with default settings (catalog window, sessions in memory), no compaction needed at this size, so the added latency is the per-request cost of the session bookkeeping, projection and relay;';

/** A table column: its header and its cell for a row (`direct` is null on direct's own row). */
type Column = [header: string, cell: (r: LoadRow, direct: LoadRow | null) => string | number];

const own = (header: string, pick: (r: LoadRow) => string | number): Column => [header, (r) => pick(r)];
/** The difference from direct at the same level; blank on direct's own row. */
const added = (header: string, pick: (r: LoadRow) => number): Column => [
  header,
  (r, d) => (d ? pick(r) - pick(d) : ''),
];
const LEAD: Column[] = [
  own('sessions at once', (r) => r.concurrency),
  own('path', (r) => r.target),
  own('requests', (r) => r.requests),
];
const THROUGHPUT: Column[] = [
  own('req/s', (r) => r.rps),
  ['req/s vs direct', (r, d) => (d ? r.rps / d.rps : '')],
];

/** One mode's rows as a table, each row against direct at the same level. */
function table(rows: LoadRow[], mode: LoadMode, columns: Column[]) {
  const mine = rows.filter((r) => r.mode === mode);
  const direct = (r: LoadRow) =>
    r.target === 'direct'
      ? null
      : mine.find((d) => d.concurrency === r.concurrency && d.target === 'direct')!;
  return {
    headers: columns.map(([h]) => h),
    rows: mine.map((r) => columns.map(([, cell]) => cell(r, direct(r)))),
  };
}

/** The non-streaming table (added latency and throughput against direct). */
export function jsonSection(rows: LoadRow[], o: LatencyOptions, notes: LoadNote[]): BenchSection {
  return {
    title:
      'compactor serve: added latency and throughput (Chat Completions, whole history resent every turn)',
    ...table(rows, 'json', [
      ...LEAD,
      own('p50 ms', (r) => r.p50),
      own('p99 ms', (r) => r.p99),
      own('p99 / p50', (r) => r.p99 / r.p50),
      added('added p50 ms', (r) => r.p50),
      added('added p99 ms', (r) => r.p99),
      ...THROUGHPUT,
    ]),
    notes: [
      sizeNote(o, 'json'),
      PATHS_NOTE,
      'Portkey gateway: @portkey-ai/gateway (node build) forwarding to the same fake with x-portkey-custom-host. Added latency = p50/p99 minus the direct p50/p99 of the same run (negative where the tail of direct is the longer, as on a busy machine); p99 / p50 = the tail of a path over its own median, comparable between paths (the goal: within 3x); one machine (2 cores) runs the clients, the fake, the proxy and the gateway.',
      ...notesOf(notes, 'json'),
    ],
  };
}

/** The streaming table: time to the first and to the last event, against direct. */
export function streamSection(rows: LoadRow[], o: LatencyOptions, notes: LoadNote[]): BenchSection {
  return {
    title: 'compactor serve: added latency and throughput, streamed (time to the first and the last event)',
    ...table(rows, 'stream', [
      ...LEAD,
      own('events per reply', (r) => r.eventsPerReply),
      own('first event p50 ms', (r) => r.firstP50),
      own('first event p99 ms', (r) => r.firstP99),
      own('first p99 / p50', (r) => r.firstP99 / r.firstP50),
      added('added first p50 ms', (r) => r.firstP50),
      added('added first p99 ms', (r) => r.firstP99),
      own('last event p50 ms', (r) => r.p50),
      own('last event p99 ms', (r) => r.p99),
      added('added last p50 ms', (r) => r.p50),
      added('added last p99 ms', (r) => r.p99),
      ...THROUGHPUT,
    ]),
    notes: [
      sizeNote(o, 'stream'),
      PATHS_NOTE,
      'Portkey gateway: the same gateway, started with a small preload (dev/bench/portkey-stream-headers.mjs) without which every streamed request through it fails with "TypeError: immutable" on Node 20 and 24 alike; it copies the headers of streamed upstream replies and changes nothing else. The gateway holds back the first event of every streamed reply by 25 ms (a pause in its own stream reader).',
      `First event: from sending the request to the first server-sent event; last event: to \`data: [DONE]\`. The fake model pauses ${STREAM_EVENT_GAP_MS} ms before each event after the first, as a model writes while it generates, so added last minus added first is what a path adds between events (a path that gathered events before passing them on would add the whole reply's time). Events per reply should match direct: a path that merges or drops events shows here.`,
      ...notesOf(notes, 'stream'),
    ],
  };
}

/** The bench's two latency tables, in its own sizes. */
export async function latency(ctx: BenchContext, upstream: AgentUpstream): Promise<BenchSection[]> {
  const o: LatencyOptions = ctx.quick
    ? { turns: 5, resultTokens: 300, levels: [1, 10] }
    : { turns: 20, resultTokens: 1_000, levels: [1, 10, 50] };
  const { rows, notes } = await measureLoad(ctx, upstream, o);
  return [jsonSection(rows, o, notes), streamSection(rows, o, notes)];
}
