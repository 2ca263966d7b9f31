import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { startAgentUpstream, type AgentTurn } from '../fakes/agent-upstream.js';
import { STREAM_EVENT_GAP_MS } from './serve-latency.js';
import { estimateBodyTokens } from '../fakes/fake-window.js';
import { sourceText } from '../loops/source-text.js';
import { requestInputDollars } from '../replay/cost.js';
import { PRICES } from '../replay/prices.js';
import { startServer } from '../../src/serve/index.js';
import { latency } from './serve-latency.js';
import { memorySection, scaleSection } from './serve-scale.js';
import { growthSection } from './serve-growth.js';
import { blockingSection } from './serve-blocking.js';
import { summaryCacheSection } from './summary-cache-bench.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/*
 * `compactor serve` under load and over a long session. Latency (serve-latency.ts): many plain
 * agent loops at once through the proxy and through Portkey's gateway against the same fake
 * model directly, streamed and not. Savings: one 50-turn session through the proxy at several
 * windows against passthrough, in tokens the model was sent and in dollars. Agent CLIs: Claude
 * Code and Codex headless through the proxy.
 */

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
      eventGapMs: STREAM_EVENT_GAP_MS,
      // Kept bodies filled this process's heap to GBs in the larger cells (hundreds of 838 KiB
      // bodies, kept raw and parsed), and its full collections paused every path it times.
      keep: false,
    });
    try {
      const load = await latency(ctx, upstream);
      const scale = await scaleSection(ctx);
      const growth = await growthSection(ctx);
      const memory = await memorySection(ctx, upstream);
      const blocking = await blockingSection(ctx, upstream);
      const saved = await savings(ctx);
      const summaryCache = await summaryCacheSection(ctx);
      const cli = await agentClis(ctx);
      return [...load, ...scale, growth, memory, blocking, saved, summaryCache, cli];
    } finally {
      await upstream.close();
    }
  },
};
