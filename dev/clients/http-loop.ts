import { nowMs } from '../bench/timing.js';
import type { WireProtocol } from '../fakes/agent-upstream.js';
import { postChatStream } from './chat-stream.js';
import { LOOP_SYSTEM, LOOP_TASK } from './tool-loop.js';

/*
 * A plain agent loop over HTTP, as the simplest agents are written: send the whole history,
 * run the tool call the model answered with, append both, repeat until the model answers
 * without a call. The benchmark drives many of these at once through each target.
 */

export interface HttpLoopOptions {
  /** Base URL including `/v1`. */
  baseUrl: string;
  protocol: Extract<WireProtocol, 'anthropic' | 'openai-chat'>;
  model: string;
  /** The tool's output for call number `n`. */
  read(n: number): string;
  /** Extra headers (session id, gateway routing). */
  headers?: Record<string, string>;
  /** Stops a loop that never ends. */
  maxTurns: number;
  /** Added to the task so concurrent sessions never share a history. */
  label?: string;
  /** Ask for server-sent events (Chat Completions only) and time the first and the last event. */
  stream?: boolean;
  /** Anthropic: ask the API to cache each request up to its end (top-level `cache_control`). */
  cacheEachRequest?: boolean;
}

export interface HttpLoopResult {
  /** Wall time of each request, in ms (streamed: until the last event). */
  latencies: number[];
  /** Streamed: time to the first event of each request, in ms (empty when not streamed). */
  firstEvents: number[];
  /** Streamed: events received over the whole loop. */
  events: number;
  /** The text of the final answer. */
  answer: string;
}

const READ_FILE_CHAT = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a source file of the repository and return its text.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
};
const READ_FILE_ANTHROPIC = {
  name: 'read_file',
  description: READ_FILE_CHAT.function.description,
  input_schema: READ_FILE_CHAT.function.parameters,
};

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Runs one loop to its end and times every request. */
export async function runHttpLoop(o: HttpLoopOptions): Promise<HttpLoopResult> {
  const task = o.label ? `${LOOP_TASK}\n(${o.label})` : LOOP_TASK;
  if (o.stream && o.protocol !== 'openai-chat')
    throw new Error('the streaming loop speaks Chat Completions only');
  const latencies: number[] = [];
  const firstEvents: number[] = [];
  let events = 0;
  let reads = 0;
  if (o.protocol === 'openai-chat') {
    const messages: any[] = [
      { role: 'system', content: LOOP_SYSTEM },
      { role: 'user', content: task },
    ];
    const headers = { authorization: 'Bearer sk-bench-not-a-real-key', ...o.headers };
    const url = `${o.baseUrl}/chat/completions`;
    for (let turn = 0; turn < o.maxTurns; turn++) {
      const body = { model: o.model, messages, tools: [READ_FILE_CHAT] };
      let m: any;
      if (o.stream) {
        const r = await postChatStream(url, body, headers);
        latencies.push(r.lastEventMs);
        firstEvents.push(r.firstEventMs);
        events += r.events;
        m = r.message;
      } else {
        const t0 = nowMs();
        const r = await post(url, body, headers);
        latencies.push(nowMs() - t0);
        m = r.choices[0].message;
      }
      messages.push({
        role: 'assistant',
        content: m.content,
        ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}),
      });
      if (!m.tool_calls?.length) return { latencies, firstEvents, events, answer: String(m.content) };
      for (const c of m.tool_calls)
        messages.push({ role: 'tool', tool_call_id: c.id, content: o.read(reads++) });
    }
  } else {
    const messages: any[] = [{ role: 'user', content: task }];
    const headers = {
      'x-api-key': 'sk-ant-bench-not-a-real-key',
      'anthropic-version': '2023-06-01',
      ...o.headers,
    };
    for (let turn = 0; turn < o.maxTurns; turn++) {
      const t0 = nowMs();
      const r = await post(
        `${o.baseUrl}/messages`,
        {
          model: o.model,
          max_tokens: 1_024,
          system: LOOP_SYSTEM,
          messages,
          tools: [READ_FILE_ANTHROPIC],
          ...(o.cacheEachRequest ? { cache_control: { type: 'ephemeral' } } : {}),
        },
        headers,
      );
      latencies.push(nowMs() - t0);
      messages.push({ role: 'assistant', content: r.content });
      const calls = (r.content as any[]).filter((b) => b.type === 'tool_use');
      if (calls.length === 0)
        return {
          latencies,
          firstEvents,
          events,
          answer: (r.content as any[]).map((b) => b.text ?? '').join(''),
        };
      messages.push({
        role: 'user',
        content: calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: o.read(reads++) })),
      });
    }
  }
  throw new Error(`the loop did not end within ${o.maxTurns} turns`);
}
