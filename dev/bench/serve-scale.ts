import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { AgentUpstream } from '../fakes/agent-upstream.js';
import { sourceText } from '../loops/source-text.js';
import { freePort, GATEWAY, percentile, startChild, stopChild } from './serve-latency.js';
import { prng } from './synthetic-session.js';
import { median, nowMs } from './timing.js';
import { startUpstreamThread } from './upstream-thread.js';
import { INSPECTOR_URL, openInspector, residentBytes, type ProcessMemory } from './process-memory.js';
import type { BenchContext, BenchSection } from './types.js';

/*
 * `compactor serve` by history size: sessions of 10k to 200k tokens that each add one tool
 * call and its result per request (as an agent resends its whole history), 1, 10 and 50 at
 * once, through the proxy in memory and with --data-dir, and through Portkey's gateway in
 * passthrough, each path measured alone on the same bodies. Added time is against the direct
 * calls of the same run; the parse floor is what decoding, parsing, serializing and encoding the
 * same bodies costs in this process, the least any proxy that reads a body must pay.
 */

export const MODEL = 'gpt-4.1';
export const RESULT_TOKENS = 2_000;
// A window larger than every history here: the rows measure the proxy's own cost, not summaries.
export const CAPACITY = 1_000_000;

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Reads a file of the repository.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

/** The body of request `turn` of a session whose history starts at `tokens` tokens. */
export function body(reads: readonly string[], session: string, tokens: number, turn: number): string {
  const pairs = Math.round(tokens / RESULT_TOKENS) + turn;
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent. Use read_file to read files.' },
    { role: 'user', content: `Session ${session}: read the files one by one, then summarize them.` },
  ];
  for (let i = 0; i < pairs; i++) {
    const id = `call_${session}_${i}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id,
          type: 'function',
          function: { name: 'read_file', arguments: JSON.stringify({ path: `f${i}` }) },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: reads[i % reads.length] });
  }
  return JSON.stringify({
    model: MODEL,
    messages,
    tools: TOOLS,
    max_tokens: 1_000,
    ...(process.env.PROBE_STREAM === '1' ? { stream: true } : {}),
  });
}

/** The tool results of sessions that open at `tokens` tokens and go on for `turns` requests. */
export function cellReads(tokens: number, turns: number): string[] {
  const source = sourceText();
  return Array.from({ length: Math.round(tokens / RESULT_TOKENS) + turns + 1 }, (_, n) =>
    source.read(n, RESULT_TOKENS),
  );
}

/** What any proxy that reads a body pays for it at least: decode, parse, serialize, encode (median ms). */
function parseFloor(text: string): number {
  const bytes = Buffer.from(text);
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = nowMs();
    Buffer.from(JSON.stringify(JSON.parse(bytes.toString('utf8'))));
    times.push(nowMs() - t0);
  }
  return median(times);
}

export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
}

/** Bytes a process has had written to storage so far (Linux), else NaN: what --data-dir costs the disk. */
function storageWrites(pid: number | undefined): number {
  try {
    const m = /^write_bytes:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Resident memory of a process in MiB (Linux), else NaN. */
const rssMib = (pid: number | undefined) => residentBytes(pid) / (1024 * 1024);

// Idle connections close on this side first: after 1 s, or, when the server says how long it
// keeps them, 2 s before it does (undici), as the agents' own clients do.
const client = new Agent({ keepAliveTimeout: 1_000, connections: 64 });

export async function send(t: Target, text: string | Buffer): Promise<number> {
  const t0 = nowMs();
  const res = await request(`${t.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test', ...t.headers },
    body: text,
    dispatcher: client,
  }).catch((e: unknown) => {
    const code = (e as { code?: unknown }).code;
    throw new Error(
      `${t.name}: ${String((e as Error).message ?? e)}${typeof code === 'string' ? ` (${code})` : ''}`,
    );
  });
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`${t.name}: status ${res.statusCode}`);
  return nowMs() - t0;
}

/** The sizes of a run: the full grid, or one small cell for a smoke test. */
function grid(quick: boolean) {
  return quick
    ? {
        sizes: [10_000],
        levels: [{ sessions: 2, turns: 3, rounds: 1 }],
        open: { sessions: 2, turns: 3, sizes: [10_000] },
      }
    : {
        sizes: [10_000, 50_000, 100_000, 200_000],
        // Ten sessions run three rounds of new sessions: one round counts 40 requests a path,
        // and its p50 moved up to 4x from run to run. One session runs seventeen (204 requests
        // a path): p99 of fewer than 101 requests is the slowest of them, one collection or
        // hiccup of the machine, and either path's share of those decided the cell.
        levels: [
          { sessions: 1, turns: 12, rounds: 17 },
          { sessions: 10, turns: 4, rounds: 3 },
          { sessions: 50, turns: 3, rounds: 1 },
        ],
        // Sessions sending at spread times, after the bursts of as many sessions, at two sizes:
        // a path takes 1.5x its bursts' time this way and every path waits for the slowest,
        // which at 200k added 45 s to the suite. Four requests a session: with two (100 a
        // path) p99 was the second slowest request.
        open: { sessions: 50, turns: 4, sizes: [10_000, 100_000] },
      };
}

interface Started {
  targets: Target[];
  children: ChildProcess[];
  proxies: Map<string, ChildProcess>;
  notes: string[];
}

async function startTargets(upstream: { url: string }, dataDir: string): Promise<Started> {
  const started: Started = {
    targets: [{ name: 'direct', url: upstream.url, headers: {} }],
    children: [],
    proxies: new Map(),
    notes: [],
  };
  const serve = ['--import', 'tsx', 'src/bin/compactor.ts', 'serve', '--port', '0'];
  const common = ['--openai-upstream', upstream.url, '--capacity', String(CAPACITY)];
  for (const [name, extra] of [
    ['memory', []],
    ['data-dir', ['--data-dir', dataDir]],
  ] as const) {
    const p = await startChild([...serve, ...common, ...extra], /serving on (http:\/\/\S+)/);
    started.children.push(p.child);
    started.proxies.set(name, p.child);
    started.targets.push({ name, url: `${p.match[1]}/v1`, headers: {} });
  }
  try {
    const port = await freePort();
    const gw = await startChild([GATEWAY, `--port=${port}`, '--headless'], /Ready for connections/);
    started.children.push(gw.child);
    started.targets.push({
      name: 'Portkey',
      url: `http://127.0.0.1:${port}/v1`,
      headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream.url },
    });
  } catch (e) {
    started.notes.push(`Portkey gateway not measured: it did not start (${String(e).split('\n')[0]}).`);
  }
  return started;
}

/**
 * Every session opens before any goes on, so what follows the openings is measured apart: a
 * session awaits the gate after its opening; `opened` runs once the last one arrives.
 */
export function openingGate(sessions: number, opened: () => unknown): () => Promise<void> {
  let opening = sessions;
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  return async () => {
    if (--opening === 0) {
      await opened();
      release();
    }
    await open;
  };
}

/**
 * One cell: `sessions` sessions of `turns` requests each, one path at a time. At each turn every
 * session sends its request to one target at once, and the next target gets the same bodies once
 * all are answered (the order of the targets is drawn anew each turn). The first request of each
 * session opens it and is not counted; `opened` runs once every session is open on every target.
 */
export async function cell(
  targets: Target[],
  reads: readonly string[],
  tag: string,
  tokens: number,
  sessions: number,
  turns: number,
  opened: () => unknown = () => undefined,
  trace?: (r: { target: string; session: number; turn: number; start: number; ms: number }) => void,
): Promise<{
  times: Map<string, number[]>;
  floor: number[];
  failed: Map<string, number>;
  bytes: number;
  /** ms each path took over its counted bursts, first request sent to last answer. */
  busy: Map<string, number>;
}> {
  const times = new Map(targets.map((t) => [t.name, [] as number[]]));
  const failed = new Map<string, number>();
  const busy = new Map(targets.map((t) => [t.name, 0]));
  const bodies = cellBodies(reads, tag, tokens, sessions, turns);
  const floor = [parseFloor(bodies[0]![Math.min(1, turns)]!.toString('utf8'))];
  const counted = bodies.flatMap((b) => b.slice(1));
  const bytes = counted.reduce((n, b) => n + b.length, 0) / counted.length;
  const order = prng(tokens * 1_000 + sessions);
  const one = async (t: Target, s: number, turn: number) => {
    const start = nowMs();
    const ms = await sendCounting(t, bodies[s]![turn]!, failed);
    if (turn > 0 && ms !== undefined) {
      times.get(t.name)!.push(ms);
      trace?.({ target: t.name, session: s, turn, start, ms });
    }
  };
  // Paths alone and fed the same bursts: a session that went through every path in turn waited
  // longest at the slowest, which then held more of the sessions while all shared the CPU, and
  // so slowed further. Two copies of one proxy measured 0.41 to 1.88x each other at 10k x 50
  // that way, 0.90 to 1.27x this way.
  for (let turn = 0; turn <= turns; turn++) {
    if (turn === 1) await opened();
    for (const t of shuffled(targets, order)) {
      const t0 = nowMs();
      await Promise.all(Array.from({ length: sessions }, (_, s) => one(t, s, turn)));
      if (turn > 0) busy.set(t.name, busy.get(t.name)! + nowMs() - t0);
    }
  }
  return { times, floor, failed, bytes, busy };
}

/** Sends a body; a failed request is counted by its path in `failed` (undefined), and the run goes on. */
const sendCounting = (t: Target, body: Buffer, failed: Map<string, number>): Promise<number | undefined> =>
  send(t, body).catch(() => {
    failed.set(t.name, (failed.get(t.name) ?? 0) + 1);
    return undefined;
  });

/** A list's p99 over its p50, to three decimals. */
const tailOf = (list: number[]) => Math.round((percentile(list, 99) / percentile(list, 50)) * 1000) / 1000;

/**
 * How far one path's percentile `p` is from another's beyond the scatter of the requests
 * measured: both lists resampled with replacement `draws` times (seeded), the 5th and 95th
 * percentile of `ours` over `theirs` at `p`, as `low–high`. A low end above 1 is a percentile
 * above the other's that the cell's own scatter does not explain (a p99 of a few hundred
 * requests rests on its few slowest, one hiccup of the machine apiece).
 */
export function ratioInterval(
  ours: number[],
  theirs: number[],
  p: number,
  seed: number,
  draws = 2_000,
): string {
  const random = prng(seed);
  const resampled = (list: number[]) =>
    percentile(
      Array.from(list, () => list[Math.floor(random() * list.length)]!),
      p,
    );
  const ratios = Array.from({ length: draws }, () => resampled(ours) / resampled(theirs)).sort(
    (a, b) => a - b,
  );
  const at = (q: number) => ratios[Math.min(draws - 1, Math.floor(q * draws))]!.toFixed(2);
  return `${at(0.05)}–${at(0.95)}`;
}

/**
 * Every body of a cell, made and encoded before it starts: made on the loop that times the
 * requests (50 bodies of 838 KiB at once when the sessions open), it delayed every path.
 */
function cellBodies(reads: readonly string[], tag: string, tokens: number, sessions: number, turns: number) {
  return Array.from({ length: sessions }, (_, s) =>
    Array.from({ length: turns + 1 }, (_, turn) => Buffer.from(body(reads, `${tag}-${s}`, tokens, turn))),
  );
}

/**
 * When each of `sessions` sessions sends each of its `turns` requests, in ms from the start: one
 * stream of arrivals `rate` a second over all sessions, with exponential gaps drawn from `seed`
 * (requests that come whether or not the path has answered the others), dealt to the sessions
 * in passes, each session once per pass in an order drawn anew, so every session has one
 * request in each stretch of `sessions` arrivals.
 */
export function arrivals(sessions: number, turns: number, rate: number, seed: number): number[][] {
  const random = prng(seed);
  const out = Array.from({ length: sessions }, () => [] as number[]);
  let at = 0;
  for (let turn = 0; turn < turns; turn++)
    for (const s of shuffled(
      Array.from({ length: sessions }, (_, i) => i),
      random,
    )) {
      at += (-Math.log(1 - random()) / rate) * 1000;
      out[s]!.push(at);
    }
  return out;
}

/** The sessions of a spread cell, their history size and the arrivals a second over all of them. */
export interface SpreadPlan {
  tag: string;
  tokens: number;
  sessions: number;
  turns: number;
  rate: number;
}

/** One counted request of a spread cell. */
export interface SpreadRequest {
  target: string;
  session: number;
  turn: number;
  /** When the request was due and when it went out, in ms from `zero`, when its path started. */
  at: number;
  start: number;
  ms: number;
  zero: number;
}

/**
 * One cell with spread arrivals: each path alone, every session opens on it at once (not
 * counted), then it gets the same `turns` requests of every session at the times {@link arrivals} drew, each
 * session's next request once its previous one is answered and its time has come. A stall of
 * the path delays the requests in flight then and not the others, so it shows in p99 over p50
 * where a burst, whose requests all wait alike, hides it.
 */
export async function spreadCell(
  targets: Target[],
  reads: readonly string[],
  { tag, tokens, sessions, turns, rate }: SpreadPlan,
  trace?: (r: SpreadRequest) => void,
): Promise<{ times: Map<string, number[]>; failed: Map<string, number> }> {
  const times = new Map(targets.map((t) => [t.name, [] as number[]]));
  const failed = new Map<string, number>();
  const bodies = cellBodies(reads, tag, tokens, sessions, turns);
  const seed = tokens * 1_000 + sessions;
  const schedule = arrivals(sessions, turns, rate, seed);
  const one = (t: Target, s: number, turn: number) => sendCounting(t, bodies[s]![turn]!, failed);
  for (const t of shuffled(targets, prng(seed + 1))) {
    // Opened right before the path's own turns: opened earlier, the work a proxy defers after
    // opening (a data-dir's writes) would land on whichever path runs next.
    await Promise.all(Array.from({ length: sessions }, (_, s) => one(t, s, 0)));
    const t0 = nowMs();
    const session = async (s: number) => {
      for (let turn = 1; turn <= turns; turn++) {
        const at = schedule[s]![turn - 1]!;
        // A timer can fire up to a millisecond early (it counts from the loop's cached time).
        for (let wait = t0 + at - nowMs(); wait > 0; wait = t0 + at - nowMs()) await sleep(Math.ceil(wait));
        const start = nowMs() - t0;
        const ms = await one(t, s, turn);
        if (ms === undefined) continue;
        times.get(t.name)!.push(ms);
        trace?.({ target: t.name, session: s, turn, at, start, ms, zero: t0 });
      }
    };
    await Promise.all(Array.from({ length: sessions }, (_, s) => session(s)));
  }
  return { times, failed };
}

/**
 * {@link cell} `rounds` times with new sessions, the times of all rounds together; `written`:
 * what each proxy process wrote to storage over the counted requests (after its sessions opened).
 */
async function cellRounds(
  targets: Target[],
  reads: readonly string[],
  tokens: number,
  { sessions, turns, rounds }: { sessions: number; turns: number; rounds: number },
  pids: Array<number | undefined>,
) {
  const tag = `s${tokens}-${sessions}`;
  const times = new Map<string, number[]>();
  const failed = new Map<string, number>();
  const floor: number[] = [];
  const written = pids.map(() => 0);
  const busy = new Map<string, number>();
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    let opened: number[] = [];
    const one = await cell(targets, reads, r === 0 ? tag : `${tag}-r${r}`, tokens, sessions, turns, () => {
      opened = pids.map(storageWrites);
    });
    pids.forEach((pid, i) => (written[i]! += storageWrites(pid) - opened[i]!));
    for (const [name, list] of one.times) times.set(name, [...(times.get(name) ?? []), ...list]);
    for (const [name, n] of one.failed) failed.set(name, (failed.get(name) ?? 0) + n);
    for (const [name, ms] of one.busy) busy.set(name, (busy.get(name) ?? 0) + ms);
    floor.push(...one.floor);
    bytes += one.bytes / rounds;
  }
  return { times, failed, floor, bytes, written, busy };
}

/** The targets in a random order (Fisher-Yates over a seeded generator). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const round = (n: number) => Math.round(n * 10) / 10;

// The share of the slowest path's throughput in bursts that spread arrivals come at: enough for
// requests to overlap, little enough that a path does not fall behind and queue as in a burst.
const OPEN_LOAD = 0.65;

/** Each path's request times in a cell of bursts and the ms it was busy with them. */
interface Bursts {
  times: Map<string, number[]>;
  busy: Map<string, number>;
}

/** A path's time per request in bursts: its busy time over the requests it answered. */
export function msPerRequest(burst: Bursts, name: string): number {
  return burst.busy.get(name)! / burst.times.get(name)!.length;
}

/** Arrivals a second for {@link spreadCell}: {@link OPEN_LOAD} of the slowest proxy's throughput in `burst`. */
export function spreadRate(targets: Target[], burst: Bursts): number {
  const slowest = Math.max(
    ...targets.filter((t) => t.name !== 'direct').map((t) => msPerRequest(burst, t.name)),
  );
  return (OPEN_LOAD * 1000) / slowest;
}

/**
 * The rows of {@link spreadCell} at one size: arrivals at {@link OPEN_LOAD} of the requests a
 * second that the slowest path other than direct answered in the bursts of as many sessions
 * (`burst`), every path's own p50, p99 and p99 / p50 beside its p99 / p50 in those bursts.
 */
async function openCellRows(
  targets: Target[],
  reads: readonly string[],
  tokens: number,
  { sessions, turns }: { sessions: number; turns: number },
  burst: Bursts,
): Promise<Array<Array<string | number>>> {
  const rate = spreadRate(targets, burst);
  const due = new Map(targets.map((t) => [t.name, [] as number[]]));
  const { times, failed } = await spreadCell(
    targets,
    reads,
    { tag: `o${tokens}`, tokens, sessions, turns, rate },
    (q) => due.get(q.target)!.push(q.at),
  );
  const queued = (name: string) => {
    const { service, p50, p99 } = queueModel(due.get(name)!, msPerRequest(burst, name));
    return Math.round(((service + p99) / (service + p50)) * 100) / 100;
  };
  return targets.map(({ name }) => [
    `${tokens / 1000}k`,
    sessions,
    round(rate),
    name,
    times.get(name)!.length,
    failed.get(name) ?? 0,
    round(percentile(times.get(name)!, 50)),
    round(percentile(times.get(name)!, 99)),
    tailOf(times.get(name)!),
    queued(name),
    tailOf(burst.times.get(name)!),
  ]);
}

/**
 * What queueing alone makes of arrivals due at `at` (ms): one server that answers in arrival
 * order, each request taking `service` ms, as a proxy's one event loop does its requests' work;
 * the ms each request waits for the server.
 */
export function queueModel(
  at: readonly number[],
  service: number,
): { service: number; p50: number; p99: number } {
  let free = 0;
  const waits = [...at]
    .sort((a, b) => a - b)
    .map((a) => {
      const start = Math.max(a, free);
      free = start + service;
      return start - a;
    });
  return { service, p50: percentile(waits, 50), p99: percentile(waits, 99) };
}

/** Added p50 and p99 by size, sessions at once and mode, beside Portkey and the parse floor. */
export async function scaleSection(ctx: BenchContext): Promise<BenchSection[]> {
  const { sizes, levels, open } = grid(ctx.quick);
  const source = sourceText();
  const pairs = Math.round(Math.max(...sizes) / RESULT_TOKENS) + Math.max(...levels.map((l) => l.turns)) + 1;
  const reads = Array.from({ length: pairs }, (_, n) => source.read(n, RESULT_TOKENS));
  const dataDir = mkdtempSync(join(tmpdir(), 'compactor-serve-scale-'));
  // Its own fake model, in a thread: on this loop its parsing would delay every path timed here.
  const upstream = await startUpstreamThread(20, MODEL);
  const started = await startTargets(upstream, dataDir).catch(async (e: unknown) => {
    await upstream.close();
    throw e;
  });
  const rows: Array<Array<string | number>> = [];
  const openRows: Array<Array<string | number>> = [];
  try {
    // A process's first requests load modules on first use and run code V8 has not optimized
    // yet: every path gets about as many requests as a cell sends before anything is counted,
    // in bursts and one session at a time (the one-session cells' second request of each new
    // session ran 3x slower for their first rounds without the latter).
    await cell(started.targets, reads, 'warm', 10_000, ctx.quick ? 1 : 10, ctx.quick ? 2 : 5);
    if (!ctx.quick)
      for (let r = 0; r < 6; r++) await cell(started.targets, reads, `warm-one-${r}`, 10_000, 1, 12);
    for (const tokens of sizes)
      for (const { sessions, turns, rounds } of levels) {
        const pids = [...started.proxies.values()].map((p) => p.pid);
        const { times, floor, failed, bytes, written, busy } = await cellRounds(
          started.targets,
          reads,
          tokens,
          { sessions, turns, rounds },
          pids,
        );
        const direct = times.get('direct')!;
        const own = (name: string, p: number) =>
          times.has(name) ? round(percentile(times.get(name)!, p)) : 'n/a';
        const added = (name: string, p: number) =>
          times.has(name) ? round(percentile(times.get(name)!, p) - percentile(direct, p)) : 'n/a';
        // A path's own tail over its own median: comparable between paths where "added p99" is
        // not (on a busy machine direct's p99 can be larger than a proxy's).
        const spread = (name: string) => (times.has(name) ? tailOf(times.get(name)!) : 'n/a');
        const requests = sessions * turns * rounds;
        const perRequest = written.map((w) => round(w / requests / 1024));
        for (const [m, mode] of ['memory', 'data-dir'].entries())
          rows.push([
            `${tokens / 1000}k`,
            sessions,
            mode,
            times.get(mode)!.length,
            failed.get(mode) ?? 0,
            own(mode, 50),
            own(mode, 99),
            spread(mode),
            added(mode, 50),
            added(mode, 99),
            own('Portkey', 50),
            own('Portkey', 99),
            spread('Portkey'),
            added('Portkey', 50),
            added('Portkey', 99),
            ratioInterval(times.get(mode)!, times.get('Portkey')!, 99, tokens + sessions),
            round(median(floor)),
            round(percentile(direct, 50)),
            round(percentile(direct, 99)),
            round(bytes / 1024),
            perRequest[m]!,
          ]);
        ctx.log(
          `bench: serve by size: ${rows
            .slice(-2)
            .map((r) => r.join(' '))
            .join('; ')}`,
        );
        if ((failed.get('Portkey') ?? 0) > 0 || (failed.get('direct') ?? 0) > 0)
          started.notes.push(
            `${tokens / 1000}k x ${sessions}: ${failed.get('direct') ?? 0} direct and ${failed.get('Portkey') ?? 0} Portkey requests failed.`,
          );
        if (sessions === open.sessions && open.sizes.includes(tokens)) {
          openRows.push(...(await openCellRows(started.targets, reads, tokens, open, { times, busy })));
          ctx.log(`bench: serve spread arrivals: ${openRows.slice(-started.targets.length).join('; ')}`);
        }
      }
    const memory = [...started.proxies].map(
      ([name, child]) => `${name} ${Math.round(rssMib(child.pid))} MiB`,
    );
    started.notes.push(`Proxy resident memory after the run: ${memory.join(', ')}.`);
  } finally {
    await Promise.all(started.children.map(stopChild));
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const bySize: BenchSection = {
    title:
      'compactor serve by history size: added ms per request, in memory and with --data-dir, beside Portkey',
    headers: [
      'history',
      'sessions',
      'mode',
      'requests',
      'failed',
      'p50',
      'p99',
      'p99 / p50',
      'added p50',
      'added p99',
      'Portkey p50',
      'Portkey p99',
      'Portkey p99 / p50',
      'Portkey added p50',
      'Portkey added p99',
      'p99 / Portkey p99, 90 % interval',
      'parse floor',
      'direct p50',
      'direct p99',
      'body KiB',
      'KiB written / request',
    ],
    rows,
    notes: [
      ...started.notes,
      `Chat Completions (${MODEL}, --capacity ${CAPACITY}: nothing compacts); each session opens at the history size and adds a tool call and a ${RESULT_TOKENS}-token result per request; the opening request is not counted; 1 session runs seventeen rounds of new sessions (204 requests a path) and 10 sessions at once three (one counts 40 requests a path).`,
      'p50, p99: ms through the path itself; p99 / p50: its tail over its median, the goal being within 3x, compared with that of Portkey. Added = the percentile through the target minus the same percentile direct, in ms (it goes negative where the tail of direct is the longer, as on a busy machine at 50 sessions); each path is measured alone: at each turn every session sends its request to one path at once, then to the next (order drawn anew each turn), so every path gets the same bodies in the same bursts; fifty requests that arrive at once end over the time the path takes for all of them, so at 50 sessions p99 / p50 reads how far the tail goes past that queue. Parse floor: Buffer to string, JSON.parse, JSON.stringify, string to Buffer of one body, in the bench process.',
      "p99 / Portkey p99, 90 % interval: the path's p99 over Portkey's when both cells' requests are resampled with replacement 2,000 times, 5th to 95th percentile (the same order as added p99, direct's p99 cancelling out). A p99 rests on the few slowest requests of a cell, one hiccup of the machine apiece; an interval across 1 is a difference the cell's own scatter explains, a low end above 1 one it does not.",
      'KiB written / request: what the proxy process had written to storage (Linux write_bytes, whole 4 KiB pages) over the counted requests of the cell (after every session had opened), per request, beside their mean body; in memory it writes nothing.',
    ],
  };
  const spread: BenchSection = {
    title: `compactor serve by history size, ${open.sessions} sessions sending at spread times: p99 over p50 of each path`,
    headers: [
      'history',
      'sessions',
      'requests / s',
      'path',
      'requests',
      'failed',
      'p50',
      'p99',
      'p99 / p50',
      'one queue p99 / p50',
      'p99 / p50 in bursts',
    ],
    rows: openRows,
    notes: [
      `New sessions at each size; each path alone: the ${open.sessions} sessions open on it at once (not counted), then send it ${open.turns} requests each at the same seeded random times for every path: one stream of arrivals with exponential gaps, at ${OPEN_LOAD * 100} % of the requests a second that the slowest path other than direct answered in the bursts of ${open.sessions} sessions at that size (requests / s), each session sending its next request once its time has come and its previous one is answered. In a burst every request waits behind the others alike, so a stall of the proxy moves p50 with p99; here requests overlap less, and one that meets a stall shows in the tail. p50, p99: ms from sending a request to its whole answer; p99 / p50 in bursts: the same path's in the table above.`,
      'One queue p99 / p50: what queueing alone makes of the same arrivals: one server answering in arrival order, each request taking the time per request the path took in those bursts (its time for all of them over their number). Random arrivals bunch, so even such a server waits; a path well above this has stalls of its own (or, with a p50 of about a millisecond as direct has, the jitter of timers and sockets).',
    ],
  };
  return [bySize, spread];
}

/** What a proxy holds per session opened, after `sessions` sessions through `--max-sessions cap` (bytes). */
async function heldPerSession(
  upstream: AgentUpstream,
  reads: readonly string[],
  tokens: number,
  sessions: number,
  cap: number,
) {
  const serve = ['--inspect=127.0.0.1:0', '--import', 'tsx', 'src/bin/compactor.ts', 'serve', '--port', '0'];
  const proxy = await startChild(
    [
      ...serve,
      '--openai-upstream',
      upstream.url,
      '--capacity',
      String(CAPACITY),
      '--max-sessions',
      String(cap),
    ],
    new RegExp(`${INSPECTOR_URL.source}[\\s\\S]*serving on (http:\\/\\/\\S+)`),
  );
  const target: Target = { name: 'memory', url: `${proxy.match[2]}/v1`, headers: {} };
  const inspector = await openInspector(proxy.match[1]!);
  try {
    await send(target, body(reads, 'warm', 10_000, 0));
    const before = await inspector.memoryAfterCollection(proxy.child.pid);
    let raw = 0;
    for (let s = 0; s < sessions; s++) {
      const text = body(reads, `m${s}`, tokens, 0);
      raw += Buffer.byteLength(text);
      await send(target, text);
      upstream.turns.length = 0;
      upstream.requests.length = 0;
    }
    const uncollected = residentBytes(proxy.child.pid);
    const after = await inspector.memoryAfterCollection(proxy.child.pid);
    const held = (m: ProcessMemory) => m.heapUsed + m.external;
    return {
      raw: raw / sessions,
      resident: (uncollected - before.rss) / sessions,
      collected: (after.rss - before.rss) / sessions,
      held: (held(after) - held(before)) / sessions,
      arrayBuffers: (after.arrayBuffers - before.arrayBuffers) / sessions,
    };
  } finally {
    await inspector.close();
    await stopChild(proxy.child);
  }
}

/**
 * Memory per session: `sessions` sessions of a 100k-token history opened one after another
 * through the proxy in memory, what it holds after a full collection before and after them,
 * against the bytes of one request (what a session holds is its history, so the raw bytes are
 * the floor). Once with every session open, once with a tenth of them kept open: the sessions
 * closed to make room must leave nothing behind.
 */
export async function memorySection(
  ctx: BenchContext,
  upstream: AgentUpstream,
  sessions = ctx.quick ? 3 : 1_000,
): Promise<BenchSection> {
  const tokens = ctx.quick ? 10_000 : 100_000;
  const source = sourceText();
  const reads = Array.from({ length: Math.round(tokens / RESULT_TOKENS) }, (_, n) =>
    source.read(n, RESULT_TOKENS),
  );
  const rows: Array<Array<string | number>> = [];
  const kib = (n: number) => Math.round(n / 1024);
  for (const cap of [sessions + 1, Math.max(1, Math.round(sessions / 10))]) {
    const m = await heldPerSession(upstream, reads, tokens, sessions, cap);
    const over = (n: number) => Math.round((n / m.raw) * 100) / 100;
    const open = Math.min(cap, sessions);
    rows.push([
      sessions,
      open,
      kib(m.raw),
      kib(m.resident),
      over(m.resident),
      kib(m.collected),
      over(m.collected),
      kib(m.held),
      over(m.held),
      kib(m.arrayBuffers),
    ]);
    ctx.log(`bench: serve memory: ${rows.at(-1)!.join(' ')}`);
  }
  return {
    title: `compactor serve memory: ${sessions.toLocaleString('en-US')} sessions of ${tokens / 1000}k tokens`,
    headers: [
      'sessions',
      'open at the end',
      'raw KiB per session',
      'resident KiB per session',
      'resident / raw',
      'after a collection: resident KiB',
      'resident / raw',
      'heap and external KiB',
      'heap and external / raw',
      'of which ArrayBuffers KiB',
    ],
    rows,
    notes: [
      `The proxy in memory, each session opened by one request; what the proxy holds after the sessions minus before, per session opened, over the request bytes of one session. First with --max-sessions above the sessions (none is closed), then with a tenth of them (the rest closed to make room: what they leave behind shows as more than a tenth of the first row).`,
      "Resident: the kernel's count (VmRSS) as the last request left it; after a collection: the same once a full garbage collection ran in the proxy (asked through its inspector), and the heap and external memory (ArrayBuffers included) the JavaScript engine accounts for then.",
    ],
  };
}
