/**
 * The fake agent model's answers in each wire shape: Anthropic Messages, OpenAI Chat
 * Completions and OpenAI Responses, as JSON or as SSE events with every text and argument
 * split into pieces (so a client or proxy must join the deltas to get them right).
 */
import type { ServerResponse } from 'node:http';
import { sendJson, sendSse, type FakeSseEvent } from './fake-http.js';
import type { FakeUsage } from './prompt-cache.js';

/** A request's input tokens, alone (nothing cached) or with what the prompt cache served. */
export type InputUsage = number | FakeUsage;
const usageOf = (u: InputUsage): FakeUsage =>
  typeof u === 'number' ? { input: u, cached: 0, written: 0 } : u;

/** One answer: a thought, and a tool call unless it is the last. */
export interface Reply {
  /** Ends the response id. */
  key: string;
  text: string;
  call?: { id: string; name: string; arguments: string };
}

/** Splits a string in three pieces, so streamed deltas must be joined to be right. */
export function pieces(s: string): string[] {
  const a = Math.floor(s.length / 3);
  const b = Math.floor((2 * s.length) / 3);
  return [s.slice(0, a), s.slice(a, b), s.slice(b)].filter((p) => p !== '');
}

export function anthropicAnswer(body: any, reply: Reply, res: ServerResponse, given: InputUsage): void {
  const u = usageOf(given);
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
    input_tokens: u.input - u.cached - u.written,
    output_tokens: 30,
    cache_creation_input_tokens: u.written,
    cache_read_input_tokens: u.cached,
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

export function chatAnswer(body: any, reply: Reply, res: ServerResponse, given: InputUsage): void {
  const { input, cached } = usageOf(given);
  const usage = {
    prompt_tokens: input,
    completion_tokens: 30,
    total_tokens: input + 30,
    prompt_tokens_details: { cached_tokens: cached },
  };
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

export function responsesAnswer(body: any, reply: Reply, res: ServerResponse, given: InputUsage): void {
  const { input, cached } = usageOf(given);
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
      input_tokens_details: { cached_tokens: cached },
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

/**
 * A Gemini API answer (`generateContent`, or `streamGenerateContent?alt=sse`: one
 * `GenerateContentResponse` per SSE frame, the text split over frames and the call in the last).
 */
export function geminiAnswer(
  body: any,
  reply: Reply,
  res: ServerResponse,
  given: InputUsage,
  stream: boolean,
): void {
  const { input, cached } = usageOf(given);
  const usageMetadata = {
    promptTokenCount: input,
    candidatesTokenCount: 30,
    totalTokenCount: input + 30,
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
  };
  const call = reply.call
    ? { functionCall: { id: reply.call.id, name: reply.call.name, args: JSON.parse(reply.call.arguments) } }
    : undefined;
  const frame = (parts: unknown[], last: boolean) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    ...(last ? { usageMetadata } : {}),
    modelVersion: typeof body?.model === 'string' ? body.model : 'fake-model',
    responseId: `gem_${reply.key}`,
  });
  const textParts = [{ text: reply.text }];
  if (!stream) return sendJson(res, 200, frame(call ? [...textParts, call] : textParts, true));
  // A call with no text before it still needs a frame to ride in.
  const texts = reply.text === '' ? [''] : pieces(reply.text);
  const events: FakeSseEvent[] = texts.map((text, i) => ({
    data: frame(i === texts.length - 1 && call ? [{ text }, call] : [{ text }], i === texts.length - 1),
  }));
  sendSse(res, events);
}
