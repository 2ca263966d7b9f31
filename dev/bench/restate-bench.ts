import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCompactorSession } from '../../src/session/index.js';
import {
  RestateServer,
  restateInstall,
  startBalancer,
  startWorker,
  stopWorker,
  type RestateInstall,
} from '../restate/harness.js';
import { growLongSession } from '../restate/long-session.js';
import { agentSteps } from '../restate/sessions.js';
import { median, nowMs } from './timing.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/**
 * Sessions on the file store (in this process) against sessions on Restate (a real server,
 * two Node 24 workers behind a balancer, calls over the ingress): turns per second and turn
 * latency at 1, 10 and 100 sessions driven at once, and the cost of one recorded step.
 * Every session starts from the same 5-step history and each turn adds one step; the route
 * is offline, so no provider time is in the numbers.
 */

const START_STEPS = 5;
const CAPACITY = 32_000;
/** Compactions behind the long session (each a round of 30 tool steps), measured at each. */
const COMPACTIONS = [12, 100];

interface Run {
  store: string;
  sessions: number;
  latencies: number[];
  wallMs: number;
}

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** Drives `sessions` sessions at once, `turns` turns each; `turn(i, t)` runs turn t of session i. */
async function drive(
  store: string,
  sessions: number,
  turns: number,
  turn: (i: number, t: number) => Promise<void>,
): Promise<Run> {
  const latencies: number[] = [];
  const t0 = nowMs();
  await Promise.all(
    Array.from({ length: sessions }, async (_, i) => {
      for (let t = 0; t < turns; t++) {
        const start = nowMs();
        await turn(i, t);
        latencies.push(nowMs() - start);
      }
    }),
  );
  return { store, sessions, latencies, wallMs: nowMs() - t0 };
}

async function fileStoreRun(sessions: number, turns: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-bench-file-'));
  try {
    const open = Array.from({ length: sessions }, (_, i) =>
      createCompactorSession({
        sessionDir: join(dir, `s${i}`),
        history: agentSteps(`file-${i}`, START_STEPS),
        limits: { capacity: CAPACITY },
      }),
    );
    const run = await drive('file store', sessions, turns, async (i, t) => {
      await open[i]!.runTurn({ pending: agentSteps(`file-${i}`, 1, 2_000, START_STEPS + t) });
    });
    for (const s of open) s.close();
    return run;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function restateRuns(
  install: RestateInstall,
  counts: number[],
  turns: number,
  log: (l: string) => void,
) {
  const server = new RestateServer(install);
  const workers = [];
  let balancer: Awaited<ReturnType<typeof startBalancer>> | undefined;
  try {
    await server.start();
    const env = { WORKER_CAPACITY: String(CAPACITY), WORKER_BENCH_STEPS: '1' };
    workers.push(...(await Promise.all([startWorker(install, env), startWorker(install, env)])));
    balancer = await startBalancer(workers.map((w) => w.port));
    await server.register(balancer.url);
    const runs: Run[] = [];
    for (const sessions of counts) {
      log(`bench: restate, ${sessions} sessions`);
      const key = (i: number) => `bench-${sessions}-${i}`;
      await Promise.all(
        Array.from({ length: sessions }, (_, i) =>
          server.call('compactorSession', key(i), 'append', { messages: agentSteps(key(i), START_STEPS) }),
        ),
      );
      runs.push(
        await drive('Restate', sessions, turns, async (i, t) => {
          await server.call('compactorSession', key(i), 'runTurn', {
            pending: agentSteps(key(i), 1, 2_000, START_STEPS + t),
          });
        }),
      );
    }
    log(`bench: restate, a session with ${COMPACTIONS.join(' and ')} compactions behind it`);
    const long = await longSessionRuns(server, turns * 4, log);
    const stepMs = await stepCost(server);
    // The same step served over HTTP/2 by one more worker, registered last so it takes the calls.
    const h2 = await startWorker(install, { ...env, WORKER_HTTP2: '1' });
    workers.push(h2);
    await server.register(`http://127.0.0.1:${h2.port}`, false);
    return { runs, long, stepMs, stepMsHttp2: await stepCost(server) };
  } finally {
    await balancer?.close();
    await Promise.all(workers.map((w) => stopWorker(w)));
    await server.dispose();
  }
}

/**
 * One session at a time: turns of a session with each of {@link COMPACTIONS} compactions
 * behind it against one with none (both adding one 2,000-character step a turn), and the
 * bytes of the session object's state Restate hands each step of their turns.
 */
async function longSessionRuns(server: RestateServer, turns: number, log: (line: string) => void) {
  const call = <T>(key: string, handler: string, body?: unknown) =>
    server.call<T>('compactorSession', key, handler, body);
  const measure = async (key: string, compactions: number, round: number) => {
    const bytes = Object.values(await server.stateBytes('compactorSession', key)).reduce((a, b) => a + b, 0);
    const run = await drive('Restate', 1, turns, async (_, t) => {
      await call(key, 'runTurn', { pending: agentSteps(`${key}-${round}`, 1, 2_000, 1_000 + t) });
    });
    return [
      compactions,
      Math.round(bytes / 1024),
      turns,
      (turns / run.wallMs) * 1000,
      median(run.latencies),
      percentile(run.latencies, 99),
    ];
  };
  await call('bench-fresh', 'append', { messages: agentSteps('bench-fresh', START_STEPS) });
  const rows = [await measure('bench-fresh', 0, 0)];
  let grown = 0;
  for (const compactions of COMPACTIONS) {
    log(`bench: restate, growing a session to ${compactions} compactions`);
    await growLongSession(call, 'bench-long', compactions - grown, 30, 2_000, grown);
    grown = compactions;
    rows.push(await measure('bench-long', compactions, grown));
  }
  return rows;
}

/** One recorded step: a handler with 50 steps against one with none, median of 7 rounds each. */
async function stepCost(server: RestateServer): Promise<number> {
  const STEPS = 50;
  const timed = async (n: number) => {
    const t0 = nowMs();
    await server.call('benchSteps', 'k', 'run', n);
    return nowMs() - t0;
  };
  await timed(1); // warm the connection and the object
  const empty: number[] = [];
  const full: number[] = [];
  for (let r = 0; r < 7; r++) {
    empty.push(await timed(0));
    full.push(await timed(STEPS));
  }
  return (median(full) - median(empty)) / STEPS;
}

async function runRestateBench(ctx: BenchContext): Promise<BenchSection[]> {
  const install = restateInstall();
  if (!install) {
    ctx.log(
      'bench: restate skipped: no Restate install (set COMPACTOR_RESTATE_HOME; .ci/run shows how to make one)',
    );
    return [];
  }
  const counts = ctx.quick ? [1, 10] : [1, 10, 100];
  const turns = ctx.quick ? 2 : 5;
  const file: Run[] = [];
  await fileStoreRun(1, 1); // load the tokenizer and warm the code before anything is timed
  for (const n of counts) {
    ctx.log(`bench: file store, ${n} sessions`);
    file.push(await fileStoreRun(n, turns));
  }
  const { runs, long, stepMs, stepMsHttp2 } = await restateRuns(install, counts, turns, ctx.log);
  const rows = [...file, ...runs]
    .sort((a, b) => a.sessions - b.sessions || a.store.localeCompare(b.store))
    .map((r) => [
      r.store,
      r.sessions,
      r.latencies.length,
      (r.latencies.length / r.wallMs) * 1000,
      median(r.latencies),
      percentile(r.latencies, 99),
    ]);
  return [
    {
      title: 'Sessions on the file store vs on Restate (two workers)',
      headers: ['store', 'sessions at once', 'turns', 'turns/s', 'p50 turn ms', 'p99 turn ms'],
      rows,
      notes: [
        `Each session starts from ${START_STEPS} tool steps; each turn adds one (2,000-character result) and runs a turn; window ${CAPACITY} tokens, offline route; ${turns} turns per session.`,
        `File store: createCompactorSession with a sessionDir per session, in this process (${process.version}). Restate: restate-server from npm, two Node 24 workers behind a TCP balancer, every turn a call over the ingress that reads the session from object state, runs the turn and writes it back.`,
        `One recorded step (ctx.run of an empty action, the wrapper of every provider call): ${stepMs.toFixed(2)} ms over HTTP/1.1, where each step ends the request and Restate calls again with the journal (the handler replays up to it); ${stepMsHttp2.toFixed(2)} ms over HTTP/2 (one worker), where the step is acknowledged on the open stream. A handler with 50 steps against one with none, median of 7.`,
        'With few turns p99 is the slowest turn. The machine is shared; compare rows of one run.',
      ],
    },
    {
      title: `A long session on Restate: ${COMPACTIONS.join(' and ')} compactions behind it against none`,
      headers: ['compactions behind', 'object state KB', 'turns', 'turns/s', 'p50 turn ms', 'p99 turn ms'],
      rows: long,
      notes: [
        `One session at a time, each turn adding one tool step of 2,000 characters. The long session grew by rounds of 30 such steps, each compacted, measured after ${COMPACTIONS.join(' and ')} of them; the other starts from ${START_STEPS} steps.`,
        `Turn rate of the session ${COMPACTIONS.at(-1)} compactions on against the new one: ${ratio(long)}× as long a turn.`,
        'Object state: what Restate hands the session object with every call, and over HTTP/1.1 again with every recorded step of a turn. Each history before a compaction, and the events before the last one, live in archive objects (compactorSessionArchive), so they are not in this number; what is left is the last boundary with the history it left, the events since, and a note of what was archived.',
      ],
    },
  ];
}

/** How many times as long a turn of the longest session takes as one of the new session (turns/s is column 3). */
function ratio(rows: (string | number)[][]): string {
  const rate = (row: (string | number)[]) => Number(row[3]);
  return (rate(rows[0]!) / rate(rows.at(-1)!)).toFixed(2);
}

/** `npm run bench -- --only restate`: needs the Restate install the Restate tests use. */
export const restateSuite: BenchSuite = { name: 'restate', run: runRestateBench };
