/**
 * Fake OpenAI-family server: Responses (`POST /v1/responses`, JSON and SSE),
 * `POST /v1/responses/compact` (OpenAI or xAI flavour) and Chat Completions
 * (`POST /v1/chat/completions`, JSON and SSE).
 *
 * Usage:
 *   const srv = await startFakeOpenAI({ window: 8_000, script: [{ kind: 'rate-limit', retryAfterMs: '5' }] });
 *   // base URL: srv.url (http://127.0.0.1:<port>/v1); srv.requests holds every request
 *   await srv.close(); // rejects when a request exceeded the declared window
 * Options: `flavor: 'xai'` makes /responses/compact answer like xAI (one compaction item,
 * `dropped_message_count`, model echoed); `summaryText` sets the generated text.
 * Faults (see fake-http.ts `Fault`): rate-limit, server-error, hang, reset, malformed-json,
 * bad-shape, truncated-stream, stream-error, empty-summary, summary-text, length, overflow (any shape),
 * stream-overflow (responses-nested | responses-flat | responses-failed | chat), status.
 */
import type { ServerResponse } from 'node:http';
import {
  handleCommonFault,
  overflowBody,
  sendJson,
  sendSse,
  startFakeServer,
  type Fault,
  type FakeServer,
  type FakeWindowOptions,
  type FakeSseEvent,
  type RecordedRequest,
} from './fake-http.js';

export interface FakeOpenAIOptions extends FakeWindowOptions {
  script?: (Fault | undefined)[];
  flavor?: 'openai' | 'xai';
  summaryText?: string;
}

/** Encrypted content the fake returns; tests check it replays verbatim. */
export const FAKE_ENCRYPTED = 'gAAAAFAKEencryptedCompaction==';

function userMessagesOf(input: unknown): unknown[] {
  if (!Array.isArray(input)) return [];
  return input
    .filter((i) => i && typeof i === 'object' && (i as { role?: string }).role === 'user')
    .map((i, n) => {
      const it = i as { content: unknown };
      const content =
        typeof it.content === 'string' ? [{ type: 'input_text', text: it.content }] : it.content;
      return { id: `msg_u${n + 1}`, type: 'message', status: 'completed', role: 'user', content };
    });
}

const usage = {
  input_tokens: 41210,
  input_tokens_details: { cached_tokens: 38912, cache_write_tokens: 0 },
  output_tokens: 2050,
  output_tokens_details: { reasoning_tokens: 512 },
  total_tokens: 43260,
};

function compact(
  req: RecordedRequest,
  fault: Fault | undefined,
  res: ServerResponse,
  flavor: 'openai' | 'xai',
): void {
  if (fault?.kind === 'rate-limit') {
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
    if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = fault.retryAfterMs;
    sendJson(
      res,
      429,
      {
        error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' },
      },
      headers,
    );
    return;
  }
  if (fault?.kind === 'overflow') {
    const o = overflowBody(fault.shape);
    sendJson(res, o.status, o.body);
    return;
  }
  if (fault?.kind === 'bad-shape') {
    sendJson(res, 200, { id: 'resp_c', object: 'response.compaction', output: 'nope' });
    return;
  }
  if (flavor === 'xai') {
    sendJson(res, 200, {
      id: 'cmp_fake01',
      object: 'response.compaction',
      created_at: 1767225600,
      model: req.body?.model,
      output: [{ type: 'compaction', id: 'cmp_fake01', encrypted_content: FAKE_ENCRYPTED }],
      usage: {
        input_tokens: 12000,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 800,
        output_tokens_details: { reasoning_tokens: 240 },
        total_tokens: 12800,
        dropped_message_count: 45,
      },
    });
    return;
  }
  sendJson(res, 200, {
    id: 'resp_c01',
    object: 'response.compaction',
    created_at: 1767225600,
    output: [
      ...userMessagesOf(req.body?.input),
      { id: 'cmp_01', type: 'compaction', encrypted_content: FAKE_ENCRYPTED, future_field: { kept: true } },
    ],
    usage,
  });
}

function responses(req: RecordedRequest, fault: Fault | undefined, res: ServerResponse, text: string): void {
  if (fault?.kind === 'overflow') {
    const o = overflowBody(fault.shape);
    sendJson(res, o.status, o.body);
    return;
  }
  const summary = fault?.kind === 'empty-summary' ? '' : fault?.kind === 'summary-text' ? fault.text : text;
  const incomplete = fault?.kind === 'length';
  const message = {
    id: 'msg_s1',
    type: 'message',
    role: 'assistant',
    status: incomplete ? 'incomplete' : 'completed',
    content: [{ type: 'output_text', text: summary, annotations: [] }],
  };
  const response = {
    id: 'resp_s1',
    object: 'response',
    status: incomplete ? 'incomplete' : 'completed',
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    output: [message],
    usage: {
      input_tokens: 900,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 50,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 950,
    },
  };
  if (req.body?.stream !== true) {
    if (fault?.kind === 'bad-shape')
      return sendJson(res, 200, { id: 'resp_s1', output: { not: 'an array' } });
    sendJson(res, 200, response);
    return;
  }
  const events: FakeSseEvent[] = [
    {
      event: 'response.created',
      data: {
        type: 'response.created',
        sequence_number: 0,
        response: { ...response, status: 'in_progress', output: [] },
      },
    },
    { event: 'response.metadata', data: { type: 'response.metadata', sequence_number: 1 } },
    {
      event: 'response.output_item.added',
      data: {
        type: 'response.output_item.added',
        sequence_number: 2,
        output_index: 0,
        item: { ...message, content: [] },
      },
    },
    {
      event: 'response.output_text.delta',
      data: {
        type: 'response.output_text.delta',
        sequence_number: 3,
        item_id: 'msg_s1',
        output_index: 0,
        content_index: 0,
        delta: summary,
      },
    },
    {
      event: 'response.output_item.done',
      data: { type: 'response.output_item.done', sequence_number: 4, output_index: 0, item: message },
    },
    {
      event: incomplete ? 'response.incomplete' : 'response.completed',
      data: {
        type: incomplete ? 'response.incomplete' : 'response.completed',
        sequence_number: 5,
        response: { ...response, output: [] },
      },
    },
  ];
  if (fault?.kind === 'stream-overflow') {
    const err = {
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
      param: 'input',
    };
    const ev: FakeSseEvent =
      fault.shape === 'responses-flat'
        ? { event: 'error', data: { ...err, type: 'error', sequence_number: 1 } }
        : fault.shape === 'responses-failed'
          ? {
              event: 'response.failed',
              data: {
                type: 'response.failed',
                sequence_number: 1,
                response: {
                  ...response,
                  status: 'failed',
                  output: [],
                  error: { code: 'context_length_exceeded', message: err.message },
                },
              },
            }
          : { event: 'error', data: { type: 'error', sequence_number: 1, error: err } };
    return sendSse(res, [events[0], ev]);
  }
  if (fault?.kind === 'stream-error') {
    return sendSse(res, [
      events[0],
      {
        event: 'error',
        data: {
          type: 'error',
          sequence_number: 1,
          error: {
            type: fault.errorType ?? 'server_error',
            code: fault.errorType ?? 'server_error',
            message: 'The server had an error while processing your request.',
          },
        },
      },
    ]);
  }
  sendSse(res, events, fault?.kind === 'truncated-stream' ? 4 : undefined);
}

function chat(req: RecordedRequest, fault: Fault | undefined, res: ServerResponse, text: string): void {
  if (fault?.kind === 'overflow') {
    const o = overflowBody(fault.shape);
    sendJson(res, o.status, o.body);
    return;
  }
  const summary = fault?.kind === 'empty-summary' ? '' : fault?.kind === 'summary-text' ? fault.text : text;
  const finish = fault?.kind === 'length' ? 'length' : 'stop';
  if (req.body?.stream !== true) {
    if (fault?.kind === 'bad-shape') return sendJson(res, 200, { id: 'chatcmpl-1', choices: [] });
    sendJson(res, 200, {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1767225600,
      model: req.body?.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: summary, refusal: null },
          finish_reason: finish,
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 812,
        completion_tokens: 25,
        total_tokens: 837,
        prompt_tokens_details: { cached_tokens: 768 },
      },
    });
    return;
  }
  const chunk = (delta: unknown, finish_reason: string | null) => ({
    data: {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: req.body?.model,
      choices: [{ index: 0, delta, finish_reason }],
      usage: null,
    },
  });
  const half = Math.ceil(summary.length / 2);
  const events: FakeSseEvent[] = [
    chunk({ role: 'assistant', content: '' }, null),
    chunk({ content: summary.slice(0, half) }, null),
    chunk({ content: summary.slice(half) }, null),
    chunk({}, finish),
    {
      data: {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: req.body?.model,
        choices: [],
        usage: { prompt_tokens: 812, completion_tokens: 25, total_tokens: 837 },
      },
    },
    { data: '[DONE]' },
  ];
  if (fault?.kind === 'stream-overflow' || fault?.kind === 'stream-error') {
    const o =
      fault.kind === 'stream-overflow'
        ? overflowBody('openrouter').body
        : { error: { code: fault.code ?? 502, message: 'Provider returned error' } };
    return sendSse(res, [events[0], { data: o }]);
  }
  sendSse(res, events, fault?.kind === 'truncated-stream' ? 2 : undefined);
}

/** Starts the fake OpenAI-family server. */
export async function startFakeOpenAI(opts: FakeOpenAIOptions): Promise<FakeServer> {
  const text = opts.summaryText ?? 'Summary: tests pass; lint step requested.';
  const flavor = opts.flavor ?? 'openai';
  return startFakeServer(
    (req, fault, res) => {
      if (fault?.kind === 'rate-limit' && !req.path.endsWith('/responses/compact')) {
        const headers: Record<string, string> = {};
        if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
        if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = fault.retryAfterMs;
        return sendJson(
          res,
          429,
          {
            error: {
              message: 'Rate limit reached',
              type: 'requests',
              param: null,
              code: 'rate_limit_exceeded',
            },
          },
          headers,
        );
      }
      if (handleCommonFault(fault, res)) return;
      if (req.method !== 'POST') return sendJson(res, 405, { error: { message: 'method not allowed' } });
      if (req.path === '/v1/responses/compact') return compact(req, fault, res, flavor);
      if (req.path === '/v1/responses') return responses(req, fault, res, text);
      if (req.path === '/v1/chat/completions') return chat(req, fault, res, text);
      sendJson(res, 404, {
        error: { message: `no route ${req.path}`, type: 'invalid_request_error', param: null, code: null },
      });
    },
    opts.script,
    { window: opts.window },
  );
}

/** Starts the fake xAI server (the OpenAI fake in xAI flavour). */
export function startFakeXai(opts: Omit<FakeOpenAIOptions, 'flavor'>): Promise<FakeServer> {
  return startFakeOpenAI({ ...opts, flavor: 'xai' });
}
