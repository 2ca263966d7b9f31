/**
 * A fake model provider that plays an agent's model: it answers every agent request with one
 * tool call (a thought and a call whose arguments the script names) until the script's last
 * step, then with the final answer. It speaks Anthropic Messages (`POST /v1/messages`, and
 * `count_tokens`), OpenAI Chat Completions and OpenAI Responses, streaming (SSE) and not, so
 * clients nobody here wrote — the official SDKs, agent CLIs — can run a whole tool loop
 * against it, directly or through a proxy.
 *
 * The next step is read from the request itself (the id of the latest tool result, `…_s<n>`),
 * not from server state: a proxy that compacts older turns away still gets the right next call,
 * and many sessions can share one server. A request that asks for a summary (no tools, tools
 * turned off, or the summary instructions in it) gets a checkpoint in the summary template's
 * sections that restates the task. Every request is recorded and held to the declared window
 * (see fake-window.ts).
 *
 * The same model can instead be steered by the client, in headers a proxy passes on
 * (`startFakeAgentUpstream`): `x-test-loop` names the loop, `x-test-step` the step and
 * `x-test-steps` the last one; that one also plays the providers' own compaction
 * (agent-compaction.ts) and answers only clients that send a credential.
 */
import type { ServerResponse } from 'node:http';
import { ABSTRACT_INSTRUCTIONS } from '../../src/summary/hierarchical.js';
import { loadSummaryPrompt, summarySections } from '../../src/summary/prompt.js';
import {
  anthropicAnswer,
  chatAnswer,
  geminiAnswer,
  responsesAnswer,
  type InputUsage,
  type Reply,
} from './agent-wire.js';
import { FakePromptCache, type FakeUsage } from './prompt-cache.js';
import {
  anthropicError,
  compactAnthropic,
  compactionRefusal,
  compactResponses,
  firstUserText,
  pausesToCompact,
} from './agent-compaction.js';
import {
  handleCommonFault,
  heldWrites,
  sendJson,
  startFakeServer,
  type FakeServer,
  type FakeWindowOptions,
  type FaultChooser,
  type RecordedRequest,
} from './fake-http.js';
import { estimateBodyTokens } from './fake-window.js';

/** What the fake model does in a loop. */
export interface AgentScript {
  /** Tool calls before the final answer. */
  steps: number;
  /** The tool it calls (as the client declared it). */
  toolName: string;
  /** The tool's arguments at step `n` (0-based). */
  args(n: number): Record<string, unknown>;
  /** The final answer after the last step. */
  finalAnswer: string;
  /** The task's goal, restated in every summary the fake writes. */
  goal: string;
}

export type WireProtocol = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';

/**
 * One request the fake answered, with what it answered. Its response id ends in `t<n>`, n its
 * index in `turns`, so a client's turn maps back to the request it answered.
 */
export interface AgentTurn {
  protocol: WireProtocol;
  /** The step it answered with a tool call, `'final'`, or `'summary'`. */
  answered: number | 'final' | 'summary';
  request: RecordedRequest;
  /** The usage it reported: its input and what the prompt cache served of it. */
  usage?: FakeUsage;
}

export interface AgentUpstream extends FakeServer {
  /** Every model request (not counted: `count_tokens` and unknown paths), in order. */
  turns: AgentTurn[];
  /** Base URL for Anthropic clients, which add `/v1` themselves. */
  anthropicUrl: string;
}

/** The thought the model says before the call of step `n`. */
export const stepThought = (n: number) => `Step ${n + 1}: reading the next file.`;
/** The call id of step `n` in each protocol (the step is read back from it). */
export const stepCallId = (protocol: WireProtocol, n: number): string =>
  protocol === 'anthropic' ? `toolu_s${n}` : `call_s${n}`;
const STEP_OF_ID = /_s(\d+)$/;

const SUMMARY_MARKER = loadSummaryPrompt().instructions.slice(0, 80);
/** The two-band summary's abstract call asks with these words instead of the summary prompt. */
const ABSTRACT_MARKER = ABSTRACT_INSTRUCTIONS.slice(0, 60);

/** The checkpoint the fake writes: every template section, the first restating the goal. */
export function fakeSummary(goal: string): string {
  return summarySections()
    .map((s, i) => `## ${s}\n${i === 0 ? goal : `Reading files one by one; this is the ${s.toLowerCase()}.`}`)
    .join('\n\n');
}

/** The text of a request's last item when it is a user's own message (not a tool result). */
function lastUserText(protocol: WireProtocol, body: any): string {
  const items: any[] =
    protocol === 'openai-responses'
      ? Array.isArray(body?.input)
        ? body.input
        : []
      : protocol === 'gemini'
        ? (body?.contents ?? [])
        : (body?.messages ?? []);
  const last = items.at(-1);
  if (last?.role !== 'user') return '';
  const content = protocol === 'gemini' ? last.parts : last.content;
  const parts: any[] = typeof content === 'string' ? [{ text: content }] : (content ?? []);
  return parts.map((p) => (typeof p?.text === 'string' && p.type !== 'tool_result' ? p.text : '')).join('\n');
}

// A summary request turns tools off or leaves them out, or ends with the summary instructions
// (only the last user message is looked at: tool results may quote the instructions' source).
export function isSummaryRequest(protocol: WireProtocol, body: any): boolean {
  const tools = body?.tools;
  if (!Array.isArray(tools) || tools.length === 0) return true;
  const choice = body.tool_choice;
  if (choice === 'none' || choice?.type === 'none') return true;
  const last = lastUserText(protocol, body);
  return last.includes(SUMMARY_MARKER) || last.includes(ABSTRACT_MARKER);
}

/** The id of the latest tool result in a request, in its protocol's shape. */
function lastResultId(protocol: WireProtocol, body: any): string | undefined {
  let id: string | undefined;
  if (protocol === 'anthropic') {
    for (const m of body?.messages ?? [])
      if (Array.isArray(m?.content))
        for (const b of m.content) if (b?.type === 'tool_result') id = String(b.tool_use_id);
  } else if (protocol === 'openai-chat') {
    for (const m of body?.messages ?? []) if (m?.role === 'tool') id = String(m.tool_call_id);
  } else if (protocol === 'gemini') {
    for (const c of body?.contents ?? [])
      for (const p of c?.parts ?? []) if (p?.functionResponse) id = String(p.functionResponse.id ?? '');
  } else if (Array.isArray(body?.input)) {
    for (const it of body.input) if (it?.type === 'function_call_output') id = String(it.call_id);
  }
  return id;
}

/** The step a request asks for: one past its latest tool result's step, else 0. */
export function nextStep(protocol: WireProtocol, body: any): number {
  const m = STEP_OF_ID.exec(lastResultId(protocol, body) ?? '');
  return m ? Number(m[1]) + 1 : 0;
}

const PATHS: Record<string, WireProtocol> = {
  '/v1/messages': 'anthropic',
  '/v1/chat/completions': 'openai-chat',
  '/v1/responses': 'openai-responses',
};

/** Gemini's model calls: `/v1beta/models/<model>:generateContent` or `:streamGenerateContent`. */
export const GEMINI_CALL = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/;

/** The protocol of a model call's path (query left off), or undefined. */
export function protocolOfPath(path: string): WireProtocol | undefined {
  return PATHS[path] ?? (GEMINI_CALL.test(path) ? 'gemini' : undefined);
}

/** Sends a reply in a protocol's shape (SSE when the request streams; Gemini: when the path says so). */
export function answer(
  protocol: WireProtocol,
  body: any,
  reply: Reply,
  res: ServerResponse,
  input: InputUsage,
  path = '',
): void {
  if (protocol === 'anthropic') anthropicAnswer(body, reply, res, input);
  else if (protocol === 'openai-chat') chatAnswer(body, reply, res, input);
  else if (protocol === 'gemini')
    geminiAnswer(body, reply, res, input, path.includes(':streamGenerateContent'));
  else responsesAnswer(body, reply, res, input);
}

/** Starts the fake agent model on 127.0.0.1 (a random port). */
export async function startAgentUpstream(
  options: FakeWindowOptions & {
    script: AgentScript;
    /** Report input tokens counted with tiktoken (default); off, a fixed count (a load test's upstream stays cheap). */
    countUsage?: boolean;
    /** A pause before each streamed event after the first, as a model writes while it generates (default none). */
    eventGapMs?: number;
  },
): Promise<AgentUpstream> {
  const gap = options.eventGapMs ?? 0;
  const paced = (res: ServerResponse) =>
    gap > 0 ? heldWrites(res, () => new Promise((resolve) => setTimeout(resolve, gap))) : res;
  const count = options.countUsage === false ? () => 1_000 : estimateBodyTokens;
  const cache = new FakePromptCache();
  const { script } = options;
  const turns: AgentTurn[] = [];
  let served = 0; // requests answered, when they are not kept
  const server = await startFakeServer(
    (req, _fault, res) => {
      const path = req.path.split('?')[0];
      const body = req.body ?? {};
      if (req.method === 'POST' && path === '/v1/messages/count_tokens')
        return sendJson(res, 200, { input_tokens: count(body) });
      const protocol = req.method === 'POST' ? PATHS[path] : undefined;
      if (!protocol)
        return sendJson(res, 404, {
          error: { type: 'not_found_error', message: `no route ${req.method} ${path}` },
        });
      // Like the real API: tool blocks need tools, compaction blocks their beta and edit.
      const refused = protocol === 'anthropic' ? compactionRefusal(req) : undefined;
      if (refused !== undefined) return sendJson(res, 400, anthropicError(refused));
      let answered: AgentTurn['answered'];
      let reply: Reply;
      const key = `t${options.keep === false ? served++ : turns.length}`; // the index in `turns`
      if (isSummaryRequest(protocol, body)) {
        answered = 'summary';
        reply = { key, text: fakeSummary(script.goal) };
      } else {
        const n = nextStep(protocol, body);
        answered = n >= script.steps ? 'final' : n;
        reply =
          n >= script.steps
            ? { key, text: script.finalAnswer }
            : {
                key,
                text: stepThought(n),
                call: {
                  id: stepCallId(protocol, n),
                  name: script.toolName,
                  arguments: JSON.stringify(script.args(n)),
                },
              };
      }
      const usage = options.countUsage === false ? count(body) : cache.count(protocol, body, count(body));
      if (options.keep !== false)
        turns.push({ protocol, answered, request: req, ...(typeof usage === 'number' ? {} : { usage }) });
      answer(protocol, body, reply, paced(res), usage);
    },
    [],
    { window: options.window, keep: options.keep },
  );
  return Object.assign(server, { turns, anthropicUrl: server.url.replace(/\/v1$/, '') });
}

// The header-steered model, for tests of the proxy that name each step themselves.

export const FINAL_TEXT = 'Done: every file was read.';

const header = (req: RecordedRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The step the client names in its headers, and the reply to it: a read_file call, or the final answer. */
function steeredReply(req: RecordedRequest): { step: number; reply: Reply } {
  const loop = header(req, 'x-test-loop') ?? 'loop';
  const step = Number(header(req, 'x-test-step') ?? '0');
  const key = `${loop}_${step}`;
  if (step >= Number(header(req, 'x-test-steps') ?? '1')) return { step, reply: { key, text: FINAL_TEXT } };
  const args = JSON.stringify({ path: `src/file-${step}.ts` });
  const call = { id: `call_${key}`, name: 'read_file', arguments: args };
  return { step, reply: { key, text: `Step ${step}: reading the next file.`, call } };
}

/** The proxy's summary requests end with the summary prompt. */
const SUMMARY_PROMPT_START = 'You are writing a checkpoint of an agent session';

/** A summary request's answer: every template section, the goal restated from the first user message. */
function summaryReply(req: RecordedRequest, step: number, key: string): Reply {
  const first = firstUserText(req.body)
    .replace(/^Previous conversation summary:\n/, '')
    .replace(/^## Goal\n/, '');
  // A band that starts after the task has the instructions as its first user text: never echoed,
  // or the agent's next request would read as a summary request.
  const asked = first.includes(SUMMARY_PROMPT_START) || first.includes(ABSTRACT_MARKER);
  const goal = asked ? 'the task the session started with' : first;
  const rest = summarySections().slice(1);
  // Each summary names the step it was written at, so a later one differs from an earlier one.
  const written = `(summary written at step ${step})`;
  const text = [`## Goal\n${goal.split('\n## ')[0]}`, ...rest.map((s) => `## ${s}\n${written}`)].join('\n');
  return { key, text };
}

/**
 * The steered fake, the requests it refused as the real API would (each: where and why), and
 * the usage it reported for each summary request, in order.
 */
export type FakeAgentUpstream = FakeServer & { refusals: string[]; summaries: FakeUsage[] };

/**
 * Starts the header-steered fake; its `url` ends in `/v1`. `compactEndpoint` says what
 * `POST /v1/responses/compact` does (compact like OpenAI, fail, or by default not exist);
 * `anthropicCompaction` whether a Messages request asking to pause after compacting gets a
 * compaction block or is refused.
 */
export async function startFakeAgentUpstream(
  opts: FakeWindowOptions &
    FaultChooser & {
      compactEndpoint?: 'none' | 'compacts' | 'fails';
      anthropicCompaction?: 'none' | 'compacts' | 'refuses';
    },
): Promise<FakeAgentUpstream> {
  const refusals: string[] = [];
  const cache = new FakePromptCache();
  const summaries: FakeUsage[] = [];
  const server = await startFakeServer(
    (req, fault, res) => {
      if (handleCommonFault(fault, res)) return;
      // The API takes a query on its paths (Claude Code asks for `/v1/messages?beta=true`).
      const path = req.path.split('?')[0];
      const auth = header(req, 'authorization') ?? header(req, 'x-api-key');
      if (auth === undefined) return sendJson(res, 401, { error: { message: 'no credentials' } });
      if (req.method === 'GET' && path === '/v1/models')
        return sendJson(res, 200, { object: 'list', data: [{ id: 'gpt-4o', object: 'model' }] });
      if (req.method === 'POST' && path === '/v1/messages/count_tokens')
        return sendJson(res, 200, { input_tokens: estimateBodyTokens(req.body) });
      if (req.method === 'POST' && path === '/v1/responses/compact') {
        if (opts.compactEndpoint === 'compacts') return compactResponses(req, res);
        if (opts.compactEndpoint === 'fails')
          return sendJson(res, 500, { error: { message: 'compaction is down', type: 'server_error' } });
      }
      const { step, reply } = steeredReply(req);
      if (req.method === 'POST' && path === '/v1/messages') {
        const refused = compactionRefusal(req);
        if (refused !== undefined) {
          refusals.push(`step ${step}: ${refused}`);
          return sendJson(res, 400, anthropicError(refused));
        }
        if (pausesToCompact(req.body)) {
          if (opts.anthropicCompaction === 'compacts') return compactAnthropic(req, res, step);
          return sendJson(res, 400, anthropicError('context_management: compaction is not available here'));
        }
      }
      const protocol = req.method === 'POST' ? protocolOfPath(path) : undefined;
      if (protocol === undefined)
        return sendJson(res, 404, { error: { message: `no route ${req.method} ${req.path}` } });
      const summary =
        req.raw.includes(SUMMARY_PROMPT_START) || lastUserText(protocol, req.body).includes(ABSTRACT_MARKER);
      const usage = cache.count(protocol, req.body, estimateBodyTokens(req.body));
      if (summary) summaries.push(usage);
      answer(protocol, req.body, summary ? summaryReply(req, step, reply.key) : reply, res, usage, path);
    },
    [],
    opts,
  );
  return Object.assign(server, { refusals, summaries });
}
