import { parseSse } from '../../src/providers/sse.js';
import { nowMs } from '../bench/timing.js';

/*
 * One streamed Chat Completions call as a plain agent makes it: post with `stream: true`, read
 * the server-sent events as they arrive, and join the deltas back into the assistant message
 * (text and tool calls) the loop continues with. The times are what a streaming client feels:
 * when the first event arrived and when the last one did.
 */

export interface ChatStreamReply {
  /** The assistant message the deltas add up to. */
  message: { content: string | null; tool_calls?: ChatToolCall[] };
  /** ms from sending the request to the first event. */
  firstEventMs: number;
  /** ms from sending the request to the last event (`[DONE]`, else the end of the stream). */
  lastEventMs: number;
  /** Events received, `[DONE]` included. */
  events: number;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Adds one chunk's delta to the message being built. */
function addDelta(message: ChatStreamReply['message'], delta: any): void {
  if (typeof delta?.content === 'string') message.content = (message.content ?? '') + delta.content;
  for (const d of delta?.tool_calls ?? []) {
    const calls = (message.tool_calls ??= []);
    const call = (calls[d.index ?? 0] ??= {
      id: '',
      type: 'function',
      function: { name: '', arguments: '' },
    });
    if (d.id) call.id = d.id;
    if (d.function?.name) call.function.name += d.function.name;
    if (d.function?.arguments) call.function.arguments += d.function.arguments;
  }
}

/** Posts a streaming Chat Completions request and reads its events to the end. */
export async function postChatStream(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<ChatStreamReply> {
  const t0 = nowMs();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  if (!res.ok || !res.body)
    throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
    throw new Error(`${url} answered ${res.headers.get('content-type')} instead of an event stream`);
  const message: ChatStreamReply['message'] = { content: null };
  let firstEventMs = NaN;
  let lastEventMs = NaN;
  let events = 0;
  let done = false;
  for await (const ev of parseSse(res.body)) {
    lastEventMs = nowMs() - t0;
    if (events++ === 0) firstEventMs = lastEventMs;
    if (ev.data.trim() === '[DONE]') {
      done = true;
      continue;
    }
    const chunk = JSON.parse(ev.data);
    if (chunk.error) throw new Error(`${url} streamed an error: ${ev.data.slice(0, 300)}`);
    addDelta(message, chunk.choices?.[0]?.delta);
  }
  if (!done) throw new Error(`${url} ended its stream without data: [DONE]`);
  return { message, firstEventMs, lastEventMs, events };
}
