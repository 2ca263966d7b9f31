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
 */
import type { ServerResponse } from 'node:http';
import { loadSummaryPrompt, summarySections } from '../../src/summary/prompt.js';
import {
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
  type FakeSseEvent,
  type FakeWindowOptions,
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

export type WireProtocol = 'anthropic' | 'openai-chat' | 'openai-responses';

/**
 * One request the fake answered, with what it answered. Its response id ends in `t<n>`, n its
 * index in `turns`, so a client's turn maps back to the request it answered.
 */
export interface AgentTurn {
  protocol: WireProtocol;
  /** The step it answered with a tool call, `'final'`, or `'summary'`. */
  answered: number | 'final' | 'summary';
  request: RecordedRequest;
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
export const stepCallId = (protocol: WireProtocol, n: number) =>
  protocol === 'anthropic' ? `toolu_s${n}` : `call_s${n}`;
const STEP_OF_ID = /_s(\d+)$/;

const SUMMARY_MARKER = loadSummaryPrompt().instructions.slice(0, 80);

/** The checkpoint the fake writes: every template section, the first restating the goal. */
export function fakeSummary(goal: string): string {
  return summarySections()
    .map((s, i) => `## ${s}\n${i === 0 ? goal : `Reading files one by one; this is the ${s.toLowerCase()}.`}`)
    .join('\n\n');
}

/** The text of a request's last item when it is a user's own message (not a tool result). */
function lastUserText(protocol: WireProtocol, body: any): string {
  const items: any[] =
    protocol === 'openai-responses' ? (Array.isArray(body?.input) ? body.input : []) : (body?.messages ?? []);
  const last = items.at(-1);
  if (last?.role !== 'user') return '';
  const parts: any[] = typeof last.content === 'string' ? [{ text: last.content }] : (last.content ?? []);
  return parts.map((p) => (typeof p?.text === 'string' && p.type !== 'tool_result' ? p.text : '')).join('\n');
}

// A summary request turns tools off or leaves them out, or ends with the summary instructions
// (only the last user message is looked at: tool results may quote the instructions' source).
function isSummaryRequest(protocol: WireProtocol, body: any): boolean {
  const tools = body?.tools;
  if (!Array.isArray(tools) || tools.length === 0) return true;
  const choice = body.tool_choice;
  if (choice === 'none' || choice?.type === 'none') return true;
  return lastUserText(protocol, body).includes(SUMMARY_MARKER);
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

interface Reply {
  /** Ends the response id. */
  key: string;
  text: string;
  call?: { id: string; name: string; arguments: string };
}

/** Splits a string in three pieces, so streamed deltas must be joined to be right. */
function pieces(s: string): string[] {
  const a = Math.floor(s.length / 3);
  const b = Math.floor((2 * s.length) / 3);
  return [s.slice(0, a), s.slice(a, b), s.slice(b)].filter((p) => p !== '');
}

function anthropicAnswer(body: any, reply: Reply, res: ServerResponse, input: number): void {
  const content: any[] = [{ type: 'text', text: reply.text }];
  if (reply.call)
    content.push({
      type: 'tool_use',
      id: reply.call.id,
      name: reply.call.name,
      input: JSON.parse(reply.call.arguments),
    });
  const stop = reply.call ? 'tool_use' : 'end_turn';
  const usage = {
    input_tokens: input,
    output_tokens: 30,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  const message = {
    id: `msg_${reply.key}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
  if (body.stream !== true) return sendJson(res, 200, message);
  const ev = (type: string, data: Record<string, unknown>): FakeSseEvent => ({
    event: type,
    data: { type, ...data },
  });
  const events: FakeSseEvent[] = [
    ev('message_start', {
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('ping', {}),
    ...pieces(reply.text).map((text) =>
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    ),
    ev('content_block_stop', { index: 0 }),
  ];
  if (reply.call)
    events.push(
      ev('content_block_start', {
        index: 1,
        content_block: { type: 'tool_use', id: reply.call.id, name: reply.call.name, input: {} },
      }),
      ...pieces(reply.call.arguments).map((partial_json) =>
        ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json } }),
      ),
      ev('content_block_stop', { index: 1 }),
    );
  events.push(
    ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 30 } }),
    ev('message_stop', {}),
  );
  sendSse(res, events);
}

function chatAnswer(body: any, reply: Reply, res: ServerResponse, input: number): void {
  const usage = { prompt_tokens: input, completion_tokens: 30, total_tokens: input + 30 };
  const finish = reply.call ? 'tool_calls' : 'stop';
  const toolCalls = reply.call
    ? [
        {
          id: reply.call.id,
          type: 'function',
          function: { name: reply.call.name, arguments: reply.call.arguments },
        },
      ]
    : undefined;
  const id = `chatcmpl-${reply.key}`;
  if (body.stream !== true)
    return sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: 1_767_225_600,
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: reply.text,
            refusal: null,
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: finish,
          logprobs: null,
        },
      ],
      usage,
    });
  const chunk = (delta: unknown, finish_reason: string | null): FakeSseEvent => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created: 1_767_225_600,
      model: body.model,
      choices: [{ index: 0, delta, finish_reason, logprobs: null }],
    },
  });
  const events: FakeSseEvent[] = [
    chunk({ role: 'assistant', content: '' }, null),
    ...pieces(reply.text).map((content) => chunk({ content }, null)),
  ];
  if (reply.call) {
    const [first, ...rest] = pieces(reply.call.arguments);
    events.push(
      chunk(
        {
          tool_calls: [
            {
              index: 0,
              id: reply.call.id,
              type: 'function',
              function: { name: reply.call.name, arguments: first },
            },
          ],
        },
        null,
      ),
      ...rest.map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] }, null)),
    );
  }
  events.push(chunk({}, finish));
  if (body.stream_options?.include_usage)
    events.push({
      data: {
        id,
        object: 'chat.completion.chunk',
        created: 1_767_225_600,
        model: body.model,
        choices: [],
        usage,
      },
    });
  events.push({ data: '[DONE]' });
  sendSse(res, events);
}

function responsesAnswer(body: any, reply: Reply, res: ServerResponse, input: number): void {
  const key = reply.key;
  const message = {
    id: `msg_${key}`,
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: reply.text, annotations: [] }],
  };
  const call = reply.call
    ? {
        id: `fc_${key}`,
        type: 'function_call',
        status: 'completed',
        call_id: reply.call.id,
        name: reply.call.name,
        arguments: reply.call.arguments,
      }
    : undefined;
  const output: any[] = call ? [message, call] : [message];
  const response = {
    id: `resp_${key}`,
    object: 'response',
    created_at: 1_767_225_600,
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: body.model,
    output,
    parallel_tool_calls: true,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + 30,
    },
  };
  if (body.stream !== true) return sendJson(res, 200, response);
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>): FakeSseEvent => ({
    event: type,
    data: { type, sequence_number: seq++, ...data },
  });
  const started = { ...response, status: 'in_progress', output: [], usage: null };
  const part = { type: 'output_text', text: '', annotations: [] };
  const events: FakeSseEvent[] = [
    ev('response.created', { response: started }),
    ev('response.in_progress', { response: started }),
    ev('response.output_item.added', {
      output_index: 0,
      item: { ...message, status: 'in_progress', content: [] },
    }),
    ev('response.content_part.added', { item_id: message.id, output_index: 0, content_index: 0, part }),
    ...pieces(reply.text).map((delta) =>
      ev('response.output_text.delta', {
        item_id: message.id,
        output_index: 0,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    ),
    ev('response.output_text.done', {
      item_id: message.id,
      output_index: 0,
      content_index: 0,
      text: reply.text,
      logprobs: [],
    }),
    ev('response.content_part.done', {
      item_id: message.id,
      output_index: 0,
      content_index: 0,
      part: { ...part, text: reply.text },
    }),
    ev('response.output_item.done', { output_index: 0, item: message }),
  ];
  if (call)
    events.push(
      ev('response.output_item.added', {
        output_index: 1,
        item: { ...call, status: 'in_progress', arguments: '' },
      }),
      ...pieces(call.arguments).map((delta) =>
        ev('response.function_call_arguments.delta', { item_id: call.id, output_index: 1, delta }),
      ),
      ev('response.function_call_arguments.done', {
        item_id: call.id,
        output_index: 1,
        name: call.name,
        arguments: call.arguments,
      }),
      ev('response.output_item.done', { output_index: 1, item: call }),
    );
  events.push(ev('response.completed', { response }));
  sendSse(res, events);
}

const PATHS: Record<string, WireProtocol> = {
  '/v1/messages': 'anthropic',
  '/v1/chat/completions': 'openai-chat',
  '/v1/responses': 'openai-responses',
};

/** Starts the fake agent model on 127.0.0.1 (a random port). */
export async function startAgentUpstream(
  options: FakeWindowOptions & {
    script: AgentScript;
    /** Report input tokens counted with tiktoken (default); off, a fixed count (a load test's upstream stays cheap). */
    countUsage?: boolean;
  },
): Promise<AgentUpstream> {
  const count = options.countUsage === false ? () => 1_000 : estimateBodyTokens;
  const { script } = options;
  const turns: AgentTurn[] = [];
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
      let answered: AgentTurn['answered'];
      let reply: Reply;
      const key = `t${turns.length}`; // the index in `turns`
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
      turns.push({ protocol, answered, request: req });
      const input = count(body);
      if (protocol === 'anthropic') anthropicAnswer(body, reply, res, input);
      else if (protocol === 'openai-chat') chatAnswer(body, reply, res, input);
      else responsesAnswer(body, reply, res, input);
    },
    [],
    { window: options.window },
  );
  return Object.assign(server, { turns, anthropicUrl: server.url.replace(/\/v1$/, '') });
}
