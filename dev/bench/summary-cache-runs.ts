import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runHttpLoop } from '../clients/http-loop.js';
import { LOOP_SYSTEM, LOOP_TASK, loopScript } from '../clients/tool-loop.js';
import { startAgentUpstream, type AgentUpstream } from '../fakes/agent-upstream.js';
import type { FakeUsage } from '../fakes/prompt-cache.js';
import { sourceText } from '../loops/source-text.js';
import { RestateServer, restateInstall, startWorker, stopWorker } from '../restate/harness.js';
import { msg, type Message } from '../../src/messages/message.js';
import { toAnthropicConversation, toAnthropicTools } from '../../src/providers/anthropic/convert.js';
import { toChatMessages, toChatTools } from '../../src/providers/chat/dialect.js';
import type { Checkpoint } from '../../src/runtime/checkpoint.js';
import { startServer, type ServeOptions } from '../../src/serve/index.js';
import { createCompactorSession, type CompactorSession } from '../../src/session/index.js';

/*
 * The summary-cache benchmark's runs outside the in-memory proxy: a library session in a
 * session directory whose compacting turns are stopped at their first checkpoint and resumed
 * by a fresh session on the same directory, and `compactor serve --engine restate` with a
 * worker on the agent's own model. Each returns the usage the fake upstream reported for
 * every summary call, from its prompt cache (dev/fakes/prompt-cache.ts).
 */

export type CacheProtocol = 'anthropic' | 'openai-chat';

export const WINDOW = 16_000;
export const RESULT_TOKENS = 2_500;
export const MODELS: Record<CacheProtocol, string> = {
  anthropic: 'claude-sonnet-4-6',
  'openai-chat': 'gpt-4o',
};
/** The route kind that speaks each protocol, for a library session or a Restate worker. */
const PROVIDERS: Record<CacheProtocol, string> = {
  anthropic: 'anthropic',
  'openai-chat': 'openai-compatible',
};
const KEY = 'sk-bench-not-a-real-key';
/** The answer each request of the library loop asks room for (as the agents of the serve runs do). */
const MAX_OUTPUT = 1_024;
const READ_FILE = {
  name: 'read_file',
  description: 'Read a source file of the repository and return its text.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};
export const COMPACTING = { enabled: false, clearWhenPassBuysFewerTurns: 0 };

export const summaryUsage = (upstream: AgentUpstream): FakeUsage[] =>
  upstream.turns.filter((t) => t.answered === 'summary').flatMap((t) => (t.usage ? [t.usage] : []));

/** One model call of the library loop: the request in the protocol's wire, the answer as canonical messages. */
async function callModel(upstream: AgentUpstream, protocol: CacheProtocol, request: readonly Message[]) {
  const model = MODELS[protocol];
  const anthropic = protocol === 'anthropic';
  const conversation = anthropic ? toAnthropicConversation(request, LOOP_SYSTEM) : undefined;
  const body = anthropic
    ? {
        model,
        max_tokens: MAX_OUTPUT,
        system: conversation!.system,
        messages: conversation!.messages,
        tools: toAnthropicTools([READ_FILE]),
        // Anthropic caches only where asked: the whole request, as agents ask.
        cache_control: { type: 'ephemeral' },
      }
    : {
        model,
        max_completion_tokens: MAX_OUTPUT,
        messages: [{ role: 'system', content: LOOP_SYSTEM }, ...toChatMessages(request)],
        tools: toChatTools([READ_FILE]),
      };
  const headers: Record<string, string> = anthropic
    ? { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }
    : { authorization: `Bearer ${KEY}` };
  const res = await fetch(`${upstream.url}${anthropic ? '/messages' : '/chat/completions'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`the fake upstream answered ${res.status}: ${JSON.stringify(json)}`);
  if (anthropic) {
    const u = json.usage;
    const cached = u.cache_read_input_tokens ?? 0;
    const calls = (json.content as any[]).filter((b) => b.type === 'tool_use');
    const text = (json.content as any[]).map((b) => b.text ?? '').join('');
    const inputTokens = u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0);
    const toolCalls = calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.input) }));
    return { text, toolCalls, usage: { inputTokens, cachedInputTokens: cached } };
  }
  const m = json.choices[0].message;
  const toolCalls = (m.tool_calls ?? []).map((c: any) => ({
    id: c.id,
    name: c.function.name,
    arguments: c.function.arguments,
  }));
  const usage = {
    inputTokens: json.usage.prompt_tokens,
    cachedInputTokens: json.usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
  return { text: String(m.content ?? ''), toolCalls, usage };
}

/**
 * A library agent loop on a session directory: every turn that compacts is stopped at its
 * first checkpoint (before its summary call), the session is closed, and a fresh one on the
 * same directory resumes the turn from that checkpoint. Returns the summary calls' usage and
 * how many turns were resumed.
 */
export async function libraryResumedCalls(
  protocol: CacheProtocol,
  overLast: boolean,
  steps: number,
): Promise<{ calls: FakeUsage[]; resumed: number }> {
  const upstream = await startAgentUpstream({ window: WINDOW, script: loopScript(steps) });
  const dir = mkdtempSync(join(tmpdir(), 'compactor-bench-resume-'));
  const provider = PROVIDERS[protocol];
  const model = MODELS[protocol];
  const options = {
    sessionDir: join(dir, 'session'),
    route: { provider, model, baseUrl: upstream.url, apiKeyEnv: 'BENCH_KEY', env: { BENCH_KEY: KEY } },
    envelope: { provider, model, system: LOOP_SYSTEM, tools: [READ_FILE] },
    limits: { capacity: WINDOW, reservedOutput: MAX_OUTPUT },
    policy: COMPACTING,
    compaction: { summaryOverLastRequest: overLast },
    http: { retries: 0 },
  };
  const source = sourceText();
  let session: CompactorSession = createCompactorSession({ ...options, history: [msg.user(LOOP_TASK)] });
  let pending: Message[] = [];
  let resumed = 0;
  try {
    for (let turn = 0; turn < steps + 2; turn++) {
      const stop = new AbortController();
      let taken: Checkpoint | undefined;
      const onCheckpoint = (c: Checkpoint) => {
        if (taken !== undefined) return;
        taken = JSON.parse(JSON.stringify(c)) as Checkpoint;
        stop.abort();
      };
      const before = session.history.length;
      let result = await session.runTurn({ pending, signal: stop.signal, onCheckpoint });
      if (result.decision === 'cancelled' && taken !== undefined) {
        // A new process: nothing left but the directory and the checkpoint.
        session.close();
        session = createCompactorSession(options);
        const again = session.history.length === before ? pending : [];
        result = await session.runTurn({ pending: again, resumeFrom: taken });
        resumed++;
      }
      if (result.request === null) throw new Error(`turn ${turn} built no request (${result.decision})`);
      const answer = await callModel(upstream, protocol, result.request);
      session.recordUsage(answer.usage, result.request);
      if (answer.toolCalls.length === 0) break;
      pending = [
        msg.assistant(answer.text, answer.toolCalls),
        ...answer.toolCalls.map((c: { id: string }, i: number) =>
          msg.tool(c.id, source.read(turn + i, RESULT_TOKENS), 'read_file'),
        ),
      ];
    }
    return { calls: summaryUsage(upstream), resumed };
  } finally {
    session.close();
    rmSync(dir, { recursive: true, force: true });
    await upstream.close();
  }
}

/** A Restate server for the Restate runs, or null when the install is missing. */
export async function startRestate(): Promise<RestateServer | null> {
  const install = restateInstall();
  if (install === null) return null;
  const server = new RestateServer(install);
  await server.start();
  return server;
}

/**
 * One agent loop through `compactor serve` (in this process) against a fresh fake upstream,
 * the proxy started with `options`; `before` runs first (a Restate worker) and hands back its
 * cleanup; `headers` go with every request. Returns the summary calls' usage.
 */
export async function proxiedCalls(
  protocol: CacheProtocol,
  steps: number,
  options: ServeOptions,
  before: (upstream: AgentUpstream) => Promise<() => Promise<void>> = async () => async () => undefined,
  headers: Record<string, string> = {},
): Promise<FakeUsage[]> {
  const upstream = await startAgentUpstream({ window: WINDOW, script: loopScript(steps) });
  const proxy = await startServer({
    port: 0,
    capacity: WINDOW,
    anthropicUpstream: upstream.anthropicUrl,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
    ...options,
  });
  const source = sourceText();
  const after = await before(upstream);
  try {
    await runHttpLoop({
      baseUrl: `${proxy.url}/v1`,
      protocol,
      model: MODELS[protocol],
      read: (n) => source.read(n, RESULT_TOKENS),
      maxTurns: steps + 2,
      headers,
      // Anthropic caches only where asked: the whole request, as agents ask.
      ...(protocol === 'anthropic' ? { cacheEachRequest: true } : {}),
    });
    return summaryUsage(upstream);
  } finally {
    await proxy.close();
    await after();
    await upstream.close();
  }
}

/**
 * One agent loop through `compactor serve --engine restate` with one Node 24 worker whose
 * route is the agent's own model on the protocol's wire, with its own key. Each run names its
 * own session: the same messages again would be the same conversation, whose turns Restate
 * answers from the earlier run (the proxy's calls are idempotent) without asking for a summary.
 */
export function restateCalls(
  restate: RestateServer,
  protocol: CacheProtocol,
  overLast: boolean,
  steps: number,
): Promise<FakeUsage[]> {
  const options = {
    engine: 'restate' as const,
    restateIngress: restate.ingress,
    session: { policy: COMPACTING },
  };
  return proxiedCalls(
    protocol,
    steps,
    options,
    async (upstream) => {
      const route = { provider: PROVIDERS[protocol], model: MODELS[protocol], baseUrl: upstream.url };
      const worker = await startWorker(restateInstall()!, {
        WORKER_ROUTE: JSON.stringify({ ...route, apiKeyEnv: 'WORKER_KEY' }),
        WORKER_CAPACITY: String(WINDOW),
        WORKER_SESSION: JSON.stringify({ compaction: { summaryOverLastRequest: overLast } }),
        WORKER_KEY: 'sk-worker-not-a-real-key',
      });
      // The newest deployment serves new calls: this worker, with this route.
      await restate.register(`http://127.0.0.1:${worker.port}`);
      return () => stopWorker(worker);
    },
    { 'x-compactor-session': `summary-cache-${protocol}-${overLast ? 'last-request' : 'fork'}` },
  );
}
