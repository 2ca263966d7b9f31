/**
 * Fake Anthropic Messages server: `POST /v1/messages`, JSON and SSE, with context
 * management and threshold compaction blocks.
 *
 * Usage:
 *   const srv = await startFakeAnthropic({ window: 8_000, script: [{ kind: 'compaction-null' }] });
 *   // base URL: srv.url (http://127.0.0.1:<port>/v1); srv.requests holds every request
 *   await srv.close(); // rejects when a request exceeded the declared window
 * Like the real API it answers 401 without `x-api-key`, and 400 when `context_management`
 * or a compaction block arrives without the beta header it needs (so tests prove the
 * client derives its betas). A request carrying the `compact_20260112` edit gets a paused
 * response holding only a compaction block (`stop_reason: "compaction"`, `usage.iterations`);
 * others get a text reply. Faults: rate-limit, server-error (529 overloaded via status),
 * hang, reset, malformed-json, bad-shape, truncated-stream, stream-error, empty-summary, summary-text,
 * length, overflow ('anthropic' | 'anthropic-413'), stream-overflow ('anthropic'),
 * compaction-null, no-compaction, rejected-edit, status.
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

export interface FakeAnthropicOptions extends FakeWindowOptions {
  script?: (Fault | undefined)[];
  summaryText?: string;
  /** Compaction block returned on compaction (default: summary text plus an unknown field). */
  compactionBlock?: Record<string, unknown>;
}

const err = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
  request_id: 'req_fake',
});

/** The real API's rejection of `clear_thinking` without thinking on. */
const CLEAR_THINKING_REJECTED =
  'context_management.edits.0: `clear_thinking_20251015` strategy requires `thinking` to be enabled or adaptive';

function hasCompactionBlock(body: any): boolean {
  return (
    Array.isArray(body?.messages) &&
    body.messages.some(
      (m: any) => Array.isArray(m?.content) && m.content.some((b: any) => b?.type === 'compaction'),
    )
  );
}

function respond(
  req: RecordedRequest,
  fault: Fault | undefined,
  res: ServerResponse,
  opts: FakeAnthropicOptions,
): void {
  const body = req.body ?? {};
  const betas = String(req.headers['anthropic-beta'] ?? '')
    .split(',')
    .map((s) => s.trim());
  if (!req.headers['x-api-key']) return sendJson(res, 401, err('authentication_error', 'invalid x-api-key'));
  const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
  const needsCompact = edits.some((e) => String(e?.type).startsWith('compact_'));
  const needsCm = edits.some((e) => /^clear_(tool_uses|thinking)_/.test(String(e?.type)));
  if (
    (needsCm && !betas.includes('context-management-2025-06-27')) ||
    (needsCompact && !betas.includes('compact-2026-01-12'))
  ) {
    return sendJson(
      res,
      400,
      err('invalid_request_error', 'context_management: Extra inputs are not permitted'),
    );
  }
  if (hasCompactionBlock(body) && !betas.includes('compact-2026-01-12')) {
    return sendJson(
      res,
      400,
      err(
        'invalid_request_error',
        "messages.0.content.0: Input tag 'compaction' found using 'type' does not match any of the expected tags",
      ),
    );
  }
  // Like the real API: clear_thinking needs thinking on.
  const thinkingOn = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
  const clearThinkingWithoutThinking = edits.some((e) => String(e?.type).startsWith('clear_thinking_'));
  if ((clearThinkingWithoutThinking && !thinkingOn) || fault?.kind === 'rejected-edit')
    return sendJson(res, 400, err('invalid_request_error', CLEAR_THINKING_REJECTED));
  if (fault?.kind === 'rate-limit') {
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
    if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = fault.retryAfterMs;
    return sendJson(
      res,
      429,
      err('rate_limit_error', 'Number of requests has exceeded your rate limit'),
      headers,
    );
  }
  if (fault?.kind === 'overflow') {
    const o = overflowBody(fault.shape);
    return sendJson(res, o.status, o.body);
  }
  if (fault?.kind === 'bad-shape')
    return sendJson(res, 200, { id: 'msg_1', type: 'message', content: 'not-an-array' });

  const text =
    fault?.kind === 'empty-summary'
      ? ''
      : fault?.kind === 'summary-text'
        ? fault.text
        : (opts.summaryText ?? 'Summary: tests pass; lint step requested.');
  const compacting = needsCompact && fault?.kind !== 'no-compaction';
  const block =
    fault?.kind === 'compaction-null'
      ? { type: 'compaction', content: null, encrypted_content: null }
      : (opts.compactionBlock ?? {
          type: 'compaction',
          content: `<summary>${text}</summary>`,
          encrypted_content: null,
          future_field: { kept: true },
        });
  const content = compacting ? [block] : [{ type: 'text', text, citations: null }];
  const stop = compacting ? 'compaction' : fault?.kind === 'length' ? 'max_tokens' : 'end_turn';
  const usage = compacting
    ? {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        iterations: [
          {
            type: 'compaction',
            input_tokens: 162000,
            output_tokens: 3100,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
          { type: 'unknown_future_iteration', input_tokens: 999999, output_tokens: 999999 },
        ],
      }
    : {
        input_tokens: 21000,
        output_tokens: 800,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 500,
        ...(needsCompact
          ? {
              iterations: [
                {
                  type: 'message',
                  input_tokens: 21000,
                  output_tokens: 800,
                  cache_creation_input_tokens: 0,
                  cache_read_input_tokens: 500,
                },
              ],
            }
          : {}),
      };
  const message = {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
    context_management: null,
  };
  if (body.stream !== true) return sendJson(res, 200, message);

  const events: FakeSseEvent[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
        },
      },
    },
  ];
  content.forEach((b, index) => {
    if (b.type === 'compaction') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { ...b, content: null } },
      });
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: {
            type: 'compaction_delta',
            content: (b as any).content,
            encrypted_content: (b as any).encrypted_content ?? null,
          },
        },
      });
    } else {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      events.push({ event: 'ping', data: { type: 'ping' } });
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
      });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage,
      context_management: null,
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  if (fault?.kind === 'stream-error')
    return sendSse(res, [
      events[0],
      { event: 'error', data: err(fault.errorType ?? 'overloaded_error', 'Overloaded') },
    ]);
  if (fault?.kind === 'stream-overflow')
    return sendSse(res, [
      events[0],
      {
        event: 'error',
        data: err('invalid_request_error', 'prompt is too long: 219898 tokens > 200000 maximum'),
      },
    ]);
  sendSse(res, events, fault?.kind === 'truncated-stream' ? 3 : undefined);
}

/** Starts the fake Anthropic server. */
export async function startFakeAnthropic(opts: FakeAnthropicOptions): Promise<FakeServer> {
  return startFakeServer(
    (req, fault, res) => {
      if (fault?.kind !== 'rate-limit' && handleCommonFault(fault, res)) return;
      if (req.method !== 'POST' || req.path !== '/v1/messages')
        return sendJson(res, 404, err('not_found_error', `no route ${req.path}`));
      respond(req, fault, res, opts);
    },
    opts.script,
    { window: opts.window },
  );
}
