import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CLAUDE_CODE_PACKAGE,
  claudeCodeArgs,
  claudeCodeEnv,
  CODEX_PACKAGE,
  codexRun,
  ensureClaudeCode,
  ensureCodex,
  runAgentCli,
} from '../clients/agent-cli.js';
import { runHttpLoop } from '../clients/http-loop.js';
import {
  auditTurns,
  LOOP_ANSWER,
  LOOP_SYSTEM,
  LOOP_TASK,
  loopScript,
  writeLoopFiles,
} from '../clients/tool-loop.js';
import { startAgentUpstream, type AgentTurn, type AgentUpstream } from '../fakes/agent-upstream.js';
import { estimateBodyTokens } from '../fakes/fake-window.js';
import { sourceText } from '../loops/source-text.js';
import { requestInputDollars } from '../replay/cost.js';
import { PRICES } from '../replay/prices.js';
import { startServer } from '../../src/serve/index.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/*
 * `compactor serve` under load and over a long session. Latency: many plain agent loops at once
 * (Chat Completions, whole history resent every turn) against the same fake model directly,
 * through the proxy (its own process, as `compactor serve` runs), and through Portkey's gateway
 * doing passthrough, in one run; the proxy's added latency is against the direct calls of the
 * same run. Savings: one 50-turn session through the proxy at several windows against
 * passthrough, in tokens the model was sent and in dollars.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODEL = 'gpt-4.1';

/** A port nothing listens on now (the gateway cannot be asked for port 0). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Starts a child and resolves once its output contains `ready` (its text, for a URL in it). */
function startChild(
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString('utf8');
      const m = out.match(ready);
      if (m) resolve({ child, match: m });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited ${code} before it was ready: ${out.slice(-500)}`)),
    );
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface Target {
  name: string;
  baseUrl: string;
  headers: (session: string) => Record<string, string>;
}

/** p-th percentile (nearest rank) of a list. */
function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

interface LoadRow {
  concurrency: number;
  target: string;
  requests: number;
  p50: number;
  p99: number;
  rps: number;
}

async function latency(ctx: BenchContext, upstream: AgentUpstream): Promise<BenchSection> {
  const turns = ctx.quick ? 5 : 20;
  const resultTokens = ctx.quick ? 300 : 1_000;
  const levels = ctx.quick ? [1, 10] : [1, 10, 50];
  const source = sourceText();
  const reads = Array.from({ length: turns }, (_, n) => source.read(n, resultTokens));
  const proxy = await startChild(
    ['--import', 'tsx', 'src/bin/compactor.ts', 'serve', '--port', '0', '--openai-upstream', upstream.url],
    /serving on (http:\/\/\S+)/,
  );
  const gatewayPort = await freePort();
  const gateway = await startChild(
    ['node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${gatewayPort}`, '--headless'],
    /Ready for connections/,
  );
  const targets: Target[] = [
    { name: 'direct', baseUrl: upstream.url, headers: () => ({}) },
    {
      name: 'compactor serve',
      baseUrl: `${proxy.match[1]}/v1`,
      headers: (session) => ({ 'x-compactor-session': session }),
    },
    {
      name: 'Portkey gateway',
      baseUrl: `http://127.0.0.1:${gatewayPort}/v1`,
      headers: () => ({ 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream.url }),
    },
  ];
  const rows: LoadRow[] = [];
  try {
    // Warm every path (module loading, first connections) before anything is timed.
    for (const t of targets)
      await runHttpLoop({
        baseUrl: t.baseUrl,
        protocol: 'openai-chat',
        model: MODEL,
        read: (n) => reads[n],
        headers: t.headers(`warm-${t.name}`),
        maxTurns: turns + 2,
        label: `warm ${t.name}`,
      });
    for (const concurrency of levels) {
      // Fewer sessions than 10 at a time run in rounds, so every level has enough requests for a p99.
      const rounds = Math.max(1, Math.ceil(10 / concurrency));
      const samples = new Map<string, { latencies: number[]; ms: number }>(
        targets.map((t) => [t.name, { latencies: [], ms: 0 }]),
      );
      for (let round = 0; round < rounds; round++) {
        // Alternate the order round by round so a busy machine slows every target alike.
        const order = round % 2 === 0 ? targets : [...targets].reverse();
        for (const t of order) {
          const started = performance.now();
          const results = await Promise.all(
            Array.from({ length: concurrency }, (_, i) =>
              runHttpLoop({
                baseUrl: t.baseUrl,
                protocol: 'openai-chat',
                model: MODEL,
                read: (n) => reads[n],
                headers: t.headers(`bench-${concurrency}-${round}-${i}`),
                maxTurns: turns + 2,
                label: `${t.name} ${concurrency} ${round} ${i}`,
              }),
            ),
          );
          const s = samples.get(t.name)!;
          s.ms += performance.now() - started;
          for (const r of results) s.latencies.push(...r.latencies);
        }
      }
      for (const t of targets) {
        const s = samples.get(t.name)!;
        rows.push({
          concurrency,
          target: t.name,
          requests: s.latencies.length,
          p50: percentile(s.latencies, 50),
          p99: percentile(s.latencies, 99),
          rps: s.latencies.length / (s.ms / 1000),
        });
      }
      ctx.log(`bench: serve latency at ${concurrency} concurrent sessions done`);
    }
  } finally {
    await stopChild(proxy.child);
    await stopChild(gateway.child);
  }
  const direct = (c: number) => rows.find((r) => r.concurrency === c && r.target === 'direct')!;
  return {
    title:
      'compactor serve: added latency and throughput (Chat Completions, whole history resent every turn)',
    headers: [
      'sessions at once',
      'path',
      'requests',
      'p50 ms',
      'p99 ms',
      'added p50 ms',
      'added p99 ms',
      'req/s',
      'req/s vs direct',
    ],
    rows: rows.map((r) => {
      const d = direct(r.concurrency);
      const base = r.target === 'direct';
      return [
        r.concurrency,
        r.target,
        r.requests,
        r.p50,
        r.p99,
        base ? '' : r.p50 - d.p50,
        base ? '' : r.p99 - d.p99,
        r.rps,
        base ? '' : r.rps / d.rps,
      ];
    }),
    notes: [
      `Each session: a ${turns}-step read_file loop with ${resultTokens}-token results (${turns + 1} requests, history up to ~${(turns * resultTokens) / 1000}k tokens), non-streaming, model ${MODEL}; fewer than 10 sessions at a time run in rounds until 10 sessions ran.`,
      'direct: the fake model on 127.0.0.1 itself; compactor serve: `compactor serve` in its own process with default settings (catalog window, sessions in memory), no compaction needed at this size, so the added latency is the per-request cost of the session bookkeeping, projection and relay;',
      'Portkey gateway: @portkey-ai/gateway (node build) forwarding to the same fake with x-portkey-custom-host. Added latency = p50/p99 minus the direct p50/p99 of the same run; one machine (2 cores) runs the clients, the fake, the proxy and the gateway.',
    ],
  };
}

/**
 * The input tokens of a request the model already saw as the previous request's prefix, and
 * whether the whole previous request was that prefix (else the cache broke there).
 */
function sharedPrefix(previous: any, current: any): { tokens: number; whole: boolean } {
  if (!previous) return { tokens: 0, whole: true };
  const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
  if (!same(previous.tools, current.tools) || !same(previous.system, current.system))
    return { tokens: 0, whole: false };
  const a: unknown[] = previous.messages ?? [];
  const b: unknown[] = current.messages ?? [];
  let n = 0;
  while (n < a.length && n < b.length && same(a[n], b[n])) n++;
  const tokens =
    n === 0
      ? 0
      : estimateBodyTokens({ system: current.system, tools: current.tools, messages: b.slice(0, n) });
  return { tokens, whole: n === a.length };
}

interface SessionCost {
  requests: number;
  summaryCalls: number;
  /** Agent requests that did not start with the whole previous agent request. */
  cacheBreaks: number;
  inputTokens: number;
  largest: number;
  dollarsCached: number;
  dollarsUncached: number;
}

/** What a session's upstream requests cost, with the provider's prompt cache and without. */
function sessionCost(turns: readonly AgentTurn[]): SessionCost {
  const price = PRICES.find((p) => p.provider === 'anthropic')!;
  const cost: SessionCost = {
    requests: 0,
    summaryCalls: 0,
    cacheBreaks: 0,
    inputTokens: 0,
    largest: 0,
    dollarsCached: 0,
    dollarsUncached: 0,
  };
  let previous: any = null;
  let previousAgent: any = null;
  for (const t of turns) {
    const body = t.request.body;
    const inputTokens = estimateBodyTokens(body);
    // The fake answers 30 tokens, a summary its checkpoint: priced as output either way.
    const output = t.answered === 'summary' ? 400 : 30;
    cost.requests++;
    if (t.answered === 'summary') cost.summaryCalls++;
    cost.inputTokens += inputTokens;
    cost.largest = Math.max(cost.largest, inputTokens);
    const split = { prefixTokens: sharedPrefix(previous, body).tokens, inputTokens };
    if (t.answered !== 'summary') {
      if (!sharedPrefix(previousAgent, body).whole) cost.cacheBreaks++;
      previousAgent = body;
    }
    cost.dollarsCached += requestInputDollars(split, price) + (output * price.output) / 1e6;
    cost.dollarsUncached += (inputTokens * price.input + output * price.output) / 1e6;
    previous = body;
  }
  return cost;
}

async function savings(ctx: BenchContext): Promise<BenchSection> {
  const steps = ctx.quick ? 12 : 50;
  const resultTokens = 2_000;
  const model = 'claude-sonnet-4-5';
  const source = sourceText();
  const reads = Array.from({ length: steps }, (_, n) => source.read(n, resultTokens));
  const windows: Array<number | undefined> = ctx.quick
    ? [undefined, 16_000]
    : [undefined, 64_000, 32_000, 16_000];
  const run = async (capacity: number | undefined | 'passthrough') => {
    const upstream = await startAgentUpstream({
      window: capacity === 'passthrough' ? 'unchecked-overflow-test' : 200_000,
      script: loopScript(steps),
    });
    const proxy =
      capacity === 'passthrough'
        ? null
        : await startServer({
            port: 0,
            anthropicUpstream: upstream.anthropicUrl,
            ...(capacity !== undefined ? { capacity } : {}),
          });
    try {
      await runHttpLoop({
        baseUrl: proxy ? `${proxy.url}/v1` : upstream.url,
        protocol: 'anthropic',
        model,
        read: (n) => reads[n],
        maxTurns: steps + 2,
      });
      const audit = auditTurns(
        upstream.turns,
        capacity === 'passthrough' || capacity === undefined ? 200_000 : capacity,
      );
      return { cost: sessionCost(upstream.turns), audit };
    } finally {
      await proxy?.close();
      await upstream.close();
    }
  };
  const base = await run('passthrough');
  const rows: Array<Array<string | number>> = [];
  const row = (label: string, r: Awaited<ReturnType<typeof run>>) => [
    label,
    r.cost.requests,
    r.cost.summaryCalls,
    r.cost.cacheBreaks,
    r.cost.inputTokens,
    r.cost.largest,
    r.audit.badPairing + r.audit.taskMissing === 0 ? 'yes' : 'NO',
    r.cost.dollarsCached,
    r.cost.dollarsUncached,
    1 - r.cost.inputTokens / base.cost.inputTokens,
    1 - r.cost.dollarsCached / base.cost.dollarsCached,
  ];
  rows.push(row('passthrough', base));
  for (const w of windows) {
    rows.push(
      row(
        w === undefined
          ? 'compactor serve, catalog window (200k)'
          : `compactor serve --capacity ${w / 1000}k`,
        await run(w),
      ),
    );
    ctx.log(`bench: serve savings at ${w ?? 'the catalog window'} done`);
  }
  const price = PRICES.find((p) => p.provider === 'anthropic')!;
  return {
    title: `compactor serve: what a ${steps}-turn session sends, through the proxy against passthrough`,
    headers: [
      'path',
      'requests',
      'summary calls',
      'prefix changes',
      'input tokens sent',
      'largest request',
      'pairing and task kept',
      '$ with prompt cache',
      '$ without cache',
      'tokens saved',
      '$ saved (cached)',
    ],
    rows,
    notes: [
      `One Anthropic Messages session (${model}): ${steps} read_file steps of ${resultTokens}-token results, the whole history resent every turn; summary calls go through the same upstream and count here.`,
      `Prices: ${price.model} list prices ($${price.input}/M input, $${price.cachedInput}/M cache read, $${price.cacheWrite}/M cache write, $${price.output}/M output); the model catalog has no prices, so the retention pilot's table is used.`,
      'With the cache: each request reads the prefix it shares with the previous request and writes the rest; a compaction or a clearing step breaks it once (prefix changes: agent requests that do not start with the whole previous one). Tokens counted with tiktoken o200k over the request body.',
    ],
  };
}

/** One agent CLI run: how to install it, the tool call the fake model makes, and how to start it. */
interface AgentCliCase {
  name: string;
  protocol: 'anthropic' | 'openai';
  install(): Promise<string>;
  tool(files: string): { name: string; args(n: number): Record<string, unknown> };
  /** Command, arguments and environment for a run against `baseUrl` (Anthropic: without `/v1`). */
  start(
    installed: string,
    baseUrl: string,
    home: string,
  ): { command: string; args: string[]; env: NodeJS.ProcessEnv };
  finished(run: Awaited<ReturnType<typeof runAgentCli>>): boolean;
}

const AGENT_CLIS: AgentCliCase[] = [
  {
    name: `Claude Code (${CLAUDE_CODE_PACKAGE})`,
    protocol: 'anthropic',
    install: () => ensureClaudeCode(),
    tool: (files) => ({ name: 'Read', args: (n) => ({ file_path: join(files, `file-${n}.txt`) }) }),
    start: (claude, baseUrl, home) => ({
      command: claude,
      args: claudeCodeArgs(LOOP_TASK, LOOP_SYSTEM, 'claude-sonnet-4-5'),
      // Its default output limit (32k) alone is more than the window.
      env: claudeCodeEnv(baseUrl, home, { CLAUDE_CODE_MAX_OUTPUT_TOKENS: '4000', MAX_THINKING_TOKENS: '0' }),
    }),
    finished: (run) => run.result?.result === LOOP_ANSWER,
  },
  {
    name: `Codex (${CODEX_PACKAGE})`,
    protocol: 'openai',
    install: () => ensureCodex(),
    tool: () => ({ name: 'exec_command', args: (n) => ({ cmd: `cat file-${n}.txt` }) }),
    start: (codex, baseUrl, home) => {
      const { args, env } = codexRun(LOOP_TASK, 'gpt-5', baseUrl, home);
      return { command: process.execPath, args: [codex, ...args], env };
    },
    finished: (run) => run.code === 0 && run.stdout.trim().endsWith(LOOP_ANSWER),
  },
];

/** The agent CLIs from npm, headless, reading files through the proxy at a 16k window, and directly. */
async function agentClis(ctx: BenchContext): Promise<BenchSection> {
  const steps = ctx.quick ? 8 : 32;
  const window = 16_000;
  const rows: Array<Array<string | number>> = [];
  const notes: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'compactor-bench-agents-'));
  const files = join(dir, 'repo');
  writeLoopFiles(files, steps, 4_000);
  try {
    for (const cli of AGENT_CLIS) {
      let installed: string;
      try {
        installed = await cli.install();
      } catch (e) {
        notes.push(`${cli.name} not run: ${(e as Error).message.split('\n')[0]}`);
        continue;
      }
      for (const through of ['direct', 'compactor serve'] as const) {
        const upstream = await startAgentUpstream({
          window: 'unchecked-overflow-test', // the direct run is expected to outgrow it; counted below
          script: loopScript(steps, cli.tool(files)),
        });
        const direct = cli.protocol === 'anthropic' ? upstream.anthropicUrl : upstream.url;
        const proxy =
          through === 'direct'
            ? null
            : await startServer({
                port: 0,
                capacity: window,
                anthropicUpstream: upstream.anthropicUrl,
                openaiUpstream: upstream.url,
              });
        const base = proxy ? (cli.protocol === 'anthropic' ? proxy.url : `${proxy.url}/v1`) : direct;
        try {
          const { command, args, env } = cli.start(installed, base, join(dir, `home-${rows.length}`));
          const started = performance.now();
          const run = await runAgentCli(command, args, { cwd: files, env });
          const wall = (performance.now() - started) / 1000;
          const audit = auditTurns(upstream.turns, window);
          rows.push([
            cli.name,
            through,
            cli.finished(run) ? 'yes' : `NO (exit ${run.code})`,
            audit.requests + audit.summaries,
            audit.largest,
            audit.overWindow,
            audit.badPairing + audit.taskMissing === 0 ? 'yes' : 'NO',
            wall,
          ]);
        } finally {
          await proxy?.close();
          await upstream.close();
        }
      }
      ctx.log(`bench: serve with ${cli.name} done`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: `Agent CLIs from npm, headless: a ${steps}-step file-reading loop at a ${window / 1000}k window`,
    headers: [
      'agent',
      'path',
      'finished',
      'requests',
      'largest request',
      'over the window',
      'pairing and task kept',
      'wall s',
    ],
    rows,
    notes: [
      ...notes,
      `\`claude -p … --output-format json --bare --tools Read\` (ANTHROPIC_BASE_URL) and \`codex exec -c openai_base_url=…\` (gpt-5, its own exec_command tool running cat), pointed at the fake model (direct) or at \`compactor serve --capacity ${window}\`; ${steps} files of ~4k tokens; offline (a dummy key, telemetry, analytics and update checks off).`,
      'Requests counted with tiktoken o200k over every string of the body (metadata included) plus the output they ask for; the direct runs show what the proxy keeps from reaching the model.',
    ],
  };
}

export const serveSuite: BenchSuite = {
  name: 'serve',
  async run(ctx) {
    const upstream = await startAgentUpstream({
      window: 'unchecked-overflow-test', // passthrough sends whole histories; no window to hold them to
      script: loopScript(ctx.quick ? 5 : 20),
      countUsage: false,
    });
    try {
      const load = await latency(ctx, upstream);
      const saved = await savings(ctx);
      const cli = await agentClis(ctx);
      return [load, saved, cli];
    } finally {
      await upstream.close();
    }
  },
};
