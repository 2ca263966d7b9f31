/**
 * A fake model behind `compactor serve` that drives a read_file agent loop in all three wire
 * shapes: `POST /v1/messages` (Anthropic), `/v1/chat/completions` and `/v1/responses`
 * (OpenAI), JSON and SSE, plus `GET /v1/models`. It keeps no state: the client names the loop
 * and the step in headers the proxy passes on (`x-test-loop`, `x-test-step`), and gets a
 * thought plus a read_file call for that step, or the final answer once `x-test-steps` is
 * reached. Requests are recorded and held to the declared window (fake-http.ts).
 */
import type { ServerResponse } from 'node:http';
import {
  handleCommonFault,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
  type FakeSseEvent,
  type FakeWindowOptions,
  type RecordedRequest,
} from './fake-http.js';
import { estimateBodyTokens } from './fake-window.js';
import { summarySections } from '#src/summary/index.js';

export const FINAL_TEXT = 'Done: every file was read.';

/** What the model does at one step: a thought and a read_file call, or the final answer. */
interface Turn {
  loop: string;
  step: number;
  final: boolean;
  thought: string;
  callId: string;
  arguments: string;
}

const header = (req: RecordedRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

function turnOf(req: RecordedRequest): Turn {
  const loop = header(req, 'x-test-loop') ?? 'loop';
  const step = Number(header(req, 'x-test-step') ?? '0');
  const steps = Number(header(req, 'x-test-steps') ?? '1');
  return {
    loop,
    step,
    final: step >= steps,
    thought: step >= steps ? FINAL_TEXT : `Step ${step}: reading the next file.`,
    callId: `call_${loop}_${step}`,
    arguments: JSON.stringify({ path: `src/file-${step}.ts` }),
  };
}

/** Splits a text in two pieces so deltas really arrive in parts. */
const halves = (s: string) => [s.slice(0, Math.ceil(s.length / 2)), s.slice(Math.ceil(s.length / 2))];

function anthropic(req: RecordedRequest, res: ServerResponse, t: Turn): void {
  const usage = { input_tokens: estimateBodyTokens(req.body), output_tokens: 30 };
  const tool = { type: 'tool_use', id: t.callId, name: 'read_file', input: JSON.parse(t.arguments) };
  const content = [{ type: 'text', text: t.thought }, ...(t.final ? [] : [tool])];
  const stop = t.final ? 'end_turn' : 'tool_use';
  const message = {
    id: `msg_${t.loop}_${t.step}`,
    type: 'message',
    role: 'assistant',
    model: req.body.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
  if (req.body.stream !== true) return sendJson(res, 200, message);
  const e = (type: string, data: object): FakeSseEvent => ({ event: type, data: { type, ...data } });
  const events = [
    e('message_start', { message: { ...message, content: [], stop_reason: null } }),
    e('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ...halves(t.thought).map((text) =>
      e('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    ),
    e('content_block_stop', { index: 0 }),
  ];
  if (!t.final)
    events.push(
      e('content_block_start', { index: 1, content_block: { ...tool, input: {} } }),
      ...halves(t.arguments).map((partial_json) =>
        e('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json } }),
      ),
      e('content_block_stop', { index: 1 }),
    );
  events.push(
    e('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 30 } }),
    e('message_stop', {}),
  );
  sendSse(res, events);
}

function chat(req: RecordedRequest, res: ServerResponse, t: Turn): void {
  const id = `chatcmpl-${t.loop}-${t.step}`;
  const base = { id, created: 1_767_225_600, model: req.body.model };
  const call = { id: t.callId, type: 'function', function: { name: 'read_file', arguments: t.arguments } };
  const finish = t.final ? 'stop' : 'tool_calls';
  const prompt = estimateBodyTokens(req.body);
  const usage = { prompt_tokens: prompt, completion_tokens: 30, total_tokens: prompt + 30 };
  if (req.body.stream !== true)
    return sendJson(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: t.thought, ...(t.final ? {} : { tool_calls: [call] }) },
          finish_reason: finish,
        },
      ],
      usage,
    });
  const chunk = (delta: object, finish_reason: string | null = null): FakeSseEvent => ({
    data: { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] },
  });
  const events = [
    chunk({ role: 'assistant', content: '' }),
    ...halves(t.thought).map((content) => chunk({ content })),
  ];
  if (!t.final) {
    const [a, b] = halves(t.arguments);
    events.push(
      chunk({
        tool_calls: [
          { index: 0, id: t.callId, type: 'function', function: { name: 'read_file', arguments: a } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: b } }] }),
    );
  }
  events.push(chunk({}, finish), { data: '[DONE]' });
  sendSse(res, events);
}

function responses(req: RecordedRequest, res: ServerResponse, t: Turn): void {
  const message = {
    type: 'message',
    id: `msg_${t.loop}_${t.step}`,
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: t.thought, annotations: [] }],
  };
  const call = {
    type: 'function_call',
    id: `fc_${t.loop}_${t.step}`,
    status: 'completed',
    call_id: t.callId,
    name: 'read_file',
    arguments: t.arguments,
  };
  const output = t.final ? [message] : [message, call];
  const input = estimateBodyTokens(req.body);
  const response = {
    id: `resp_${t.loop}_${t.step}`,
    object: 'response',
    created_at: 1_767_225_600,
    status: 'completed',
    model: req.body.model,
    output,
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + 30,
    },
  };
  if (req.body.stream !== true) return sendJson(res, 200, response);
  let seq = 0;
  const e = (type: string, data: object): FakeSseEvent => ({
    event: type,
    data: { type, sequence_number: seq++, ...data },
  });
  const events = [e('response.created', { response: { ...response, status: 'in_progress', output: [] } })];
  output.forEach((item, output_index) => {
    events.push(e('response.output_item.added', { output_index, item }));
    if (item.type === 'function_call')
      for (const delta of halves(t.arguments))
        events.push(e('response.function_call_arguments.delta', { output_index, item_id: item.id, delta }));
    events.push(e('response.output_item.done', { output_index, item }));
  });
  events.push(e('response.completed', { response }));
  sendSse(res, events);
}

/** The proxy's summary requests end with the summary prompt. */
const SUMMARY_PROMPT_START = 'You are writing a checkpoint of an agent session';

/** The text of the first user message of a request in any of the three shapes. */
function firstUserText(body: any): string {
  const list: any[] = body.messages ?? body.input ?? [];
  // After an Anthropic compaction the block's summary stands for everything before it.
  const block = compactionBlocks(body).at(-1)?.block;
  if (typeof block?.content === 'string') return block.content;
  const first = list.find((m) => m?.role === 'user');
  const content = first?.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((c: any) => c?.text ?? '').join('') : '';
}

/** A summary request's answer: every template section, the goal restated from the first user message. */
function summaryTurn(req: RecordedRequest): Turn | undefined {
  if (!req.raw.includes(SUMMARY_PROMPT_START)) return undefined;
  const goal = firstUserText(req.body)
    .replace(/^Previous conversation summary:\n/, '')
    .replace(/^## Goal\n/, '');
  const rest = summarySections().slice(1);
  // Each summary names the step it was written at, so a later one differs from an earlier one.
  const written = `(summary written at step ${turnOf(req).step})`;
  const text = [`## Goal\n${goal.split('\n## ')[0]}`, ...rest.map((s) => `## ${s}\n${written}`)].join('\n');
  return { ...turnOf(req), final: true, thought: text };
}

/** What the fake's `POST /v1/responses/compact` does: compact like OpenAI, fail, or (default) not exist. */
export type FakeCompactEndpoint = 'none' | 'compacts' | 'fails';

/**
 * OpenAI's native compaction: the input's user messages kept, everything else folded into one
 * opaque compaction item.
 */
function compact(req: RecordedRequest, res: ServerResponse): void {
  const input: unknown[] = Array.isArray(req.body?.input) ? req.body.input : [];
  const users = input
    .filter((i) => (i as { role?: string } | null)?.role === 'user')
    .map((i, n) => {
      const content = (i as { content: unknown }).content;
      const parts = typeof content === 'string' ? [{ type: 'input_text', text: content }] : content;
      return { id: `msg_u${n + 1}`, type: 'message', status: 'completed', role: 'user', content: parts };
    });
  const encrypted = `gAAAAcompacted-${input.length}-items==`;
  const usage = { input_tokens: estimateBodyTokens(req.body), output_tokens: 200 };
  sendJson(res, 200, {
    id: `resp_compact_${input.length}`,
    object: 'response.compaction',
    created_at: 1_767_225_600,
    output: [...users, { id: `cmp_${input.length}`, type: 'compaction', encrypted_content: encrypted }],
    usage,
  });
}

/** What the fake does with Anthropic's compact edit when asked to pause after compacting: compact, or refuse. */
export type FakeAnthropicCompaction = 'none' | 'compacts' | 'refuses';

/** The compaction blocks of a Messages body, with where they are. */
function compactionBlocks(body: any): { at: string; block: any }[] {
  const found: { at: string; block: any }[] = [];
  (Array.isArray(body?.messages) ? body.messages : []).forEach((m: any, i: number) => {
    if (Array.isArray(m?.content))
      m.content.forEach((b: any, j: number) => {
        if (b?.type === 'compaction') found.push({ at: `messages.${i}.content.${j}`, block: b });
      });
  });
  return found;
}

const COMPACTION_KEYS = new Set(['type', 'content', 'encrypted_content', 'cache_control']);
const anthropicError = (message: string) => ({
  type: 'error',
  error: { type: 'invalid_request_error', message },
});

/**
 * What Anthropic checks of a request's tools and of threshold compaction: a request with tool
 * blocks must define its tools; the compact edit needs its beta and a trigger
 * of at least 50,000 tokens; a compaction block is only accepted from a request that carries
 * the beta and declares the edit, and with no keys the block does not have. Undefined: accepted.
 */
function compactionRefusal(req: RecordedRequest): string | undefined {
  const betas = String(header(req, 'anthropic-beta') ?? '')
    .split(',')
    .map((b) => b.trim());
  const edits: any[] = Array.isArray(req.body?.context_management?.edits)
    ? req.body.context_management.edits
    : [];
  const compact = edits.find((e) => e?.type === 'compact_20260112');
  const hasBeta = betas.includes('compact-2026-01-12');
  if (compact !== undefined && !hasBeta) return 'context_management.edits.0: Extra inputs are not permitted';
  if (compact !== undefined && !(compact.trigger?.value >= 50_000))
    return 'context_management.edits.0.trigger.value: Input should be greater than or equal to 50000';
  const blocks = (req.body?.messages ?? []).flatMap((m: any) => (Array.isArray(m?.content) ? m.content : []));
  const usesTools = blocks.some((b: any) => b?.type === 'tool_use' || b?.type === 'tool_result');
  if (usesTools && !(Array.isArray(req.body.tools) && req.body.tools.length > 0))
    return 'Requests which include tool_use or tool_result blocks must define tools.';
  for (const { at, block } of compactionBlocks(req.body)) {
    if (!hasBeta)
      return `${at}: Input tag 'compaction' found using 'type' does not match any of the expected tags`;
    const extra = Object.keys(block).find((k) => !COMPACTION_KEYS.has(k));
    if (extra !== undefined) return `${at}.compaction.${extra}: Extra inputs are not permitted`;
    if (block.content === '') return `${at}.compaction.content: Empty string content is not allowed`;
    if (compact === undefined)
      return `${at}: a compaction block requires the compact_20260112 edit in context_management`;
  }
  return undefined;
}

/** A paused compaction: one block holding the summary (the goal restated, the step it was written at). */
function compactAnthropic(req: RecordedRequest, res: ServerResponse): void {
  const goal = firstUserText(req.body)
    .replace(/^## Goal\n/, '')
    .split('\n## ')[0];
  const rest = summarySections().slice(1);
  const written = `(compacted at step ${turnOf(req).step})`;
  const content = [`## Goal\n${goal}`, ...rest.map((s) => `## ${s}\n${written}`)].join('\n');
  const input = estimateBodyTokens(req.body);
  sendJson(res, 200, {
    id: `msg_compact_${turnOf(req).step}`,
    type: 'message',
    role: 'assistant',
    model: req.body.model,
    content: [{ type: 'compaction', content, encrypted_content: null }],
    stop_reason: 'compaction',
    stop_sequence: null,
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      iterations: [{ type: 'compaction', input_tokens: input, output_tokens: 300 }],
    },
  });
}

/** Whether a Messages request asks to stop once it has compacted. */
const pausesToCompact = (body: any) =>
  Array.isArray(body?.context_management?.edits) &&
  body.context_management.edits.some(
    (e: any) => e?.type === 'compact_20260112' && e.pause_after_compaction === true,
  );

/** The fake, and the requests it refused as the real API would (each: where and why). */
export type FakeAgentUpstream = FakeServer & { refusals: string[] };

/** Starts the fake; its `url` ends in `/v1`. */
export async function startFakeAgentUpstream(
  opts: FakeWindowOptions & {
    compactEndpoint?: FakeCompactEndpoint;
    anthropicCompaction?: FakeAnthropicCompaction;
  },
): Promise<FakeAgentUpstream> {
  const refusals: string[] = [];
  const server = await startFakeServer(
    (req, fault, res) => {
      if (handleCommonFault(fault, res)) return;
      const auth = header(req, 'authorization') ?? header(req, 'x-api-key');
      if (auth === undefined) return sendJson(res, 401, { error: { message: 'no credentials' } });
      if (req.method === 'GET' && req.path === '/v1/models')
        return sendJson(res, 200, { object: 'list', data: [{ id: 'gpt-4o', object: 'model' }] });
      if (req.method === 'POST' && req.path === '/v1/messages/count_tokens')
        return sendJson(res, 200, { input_tokens: estimateBodyTokens(req.body) });
      if (req.method === 'POST' && req.path === '/v1/responses/compact') {
        if (opts.compactEndpoint === 'compacts') return compact(req, res);
        if (opts.compactEndpoint === 'fails')
          return sendJson(res, 500, { error: { message: 'compaction is down', type: 'server_error' } });
      }
      if (req.method === 'POST' && req.path === '/v1/messages') {
        const refused = compactionRefusal(req);
        if (refused !== undefined) {
          refusals.push(`step ${turnOf(req).step}: ${refused}`);
          return sendJson(res, 400, anthropicError(refused));
        }
        if (pausesToCompact(req.body)) {
          if (opts.anthropicCompaction === 'compacts') return compactAnthropic(req, res);
          return sendJson(res, 400, anthropicError('context_management: compaction is not available here'));
        }
      }
      const t = summaryTurn(req) ?? turnOf(req);
      if (req.method === 'POST' && req.path === '/v1/messages') return anthropic(req, res, t);
      if (req.method === 'POST' && req.path === '/v1/chat/completions') return chat(req, res, t);
      if (req.method === 'POST' && req.path === '/v1/responses') return responses(req, res, t);
      sendJson(res, 404, { error: { message: `no route ${req.method} ${req.path}` } });
    },
    [],
    opts,
  );
  return Object.assign(server, { refusals });
}
