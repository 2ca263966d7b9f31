import { z } from 'zod';
import { textOf, type Json, type Message } from '../../messages/message.js';
import type { CallSite } from '../classify-error.js';
import {
  bearerHeaders,
  parseResponse,
  withInstructions,
  type WireBody,
  type WireDialect,
} from '../dialect.js';
import { truncatedStream } from '../http.js';
import { forwardedFields } from '../request-fields.js';
import { wireTools } from '../tool-catalog.js';
import {
  eventData,
  isEventObject as isObj,
  streamError,
  type EventObject as Obj,
  type SseEvent,
} from '../sse.js';
import type { ToolSchema, Usage } from '../types.js';

/**
 * The Chat Completions dialect (OpenAI-compatible servers, xAI, Vercel, OpenRouter …): Local
 * summaries only, no native compaction. Canonical messages become Chat messages; opaque
 * provider items are not sent (Chat has no slot for them); tool calls and results keep their
 * pairing.
 */

function userContent(m: Message): Json {
  if (typeof m.content === 'string') return m.content;
  const parts: Json[] = [];
  for (const p of m.content) {
    if (p.type === 'text') parts.push({ type: 'text', text: p.text });
    else if (p.type === 'image') {
      const url = p.url ?? (p.data ? `data:${p.mimeType ?? 'image/png'};base64,${p.data}` : undefined);
      if (url) parts.push({ type: 'image_url', image_url: { url } });
    } else parts.push({ type: 'text', text: `[file ${p.filename ?? p.fileId ?? p.url ?? ''}]` });
  }
  return parts;
}

/** Converts canonical messages to Chat Completions messages. */
export function toChatMessages(messages: readonly Message[]): Json[] {
  const out: Json[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        out.push({ role: 'system', content: textOf(m.content) });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(m) });
        break;
      case 'assistant': {
        const text = textOf(m.content);
        const calls = m.toolCalls ?? [];
        if (text.length === 0 && calls.length === 0) break; // opaque-only marker: nothing Chat can carry
        const a: { [k: string]: Json } = { role: 'assistant', content: text.length > 0 ? text : null };
        if (calls.length > 0) {
          a.tool_calls = calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.freeformInput ?? c.arguments },
          }));
        }
        out.push(a);
        break;
      }
      case 'tool':
        out.push({ role: 'tool', tool_call_id: m.toolCallId ?? '', content: textOf(m.content) });
        break;
    }
  }
  return out;
}

/** Tool catalog in Chat form (listed but disabled by `tool_choice: "none"`: a summary calls no tools). */
export function toChatTools(tools: readonly ToolSchema[]): Json[] {
  return wireTools(tools, 'chat', (t) => ({
    type: 'function',
    function: {
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: (t.parameters ?? { type: 'object', properties: {} }) as Json,
    },
  }));
}

/** Chat Completions stream → a `chat.completion` object (one choice, text only). */
export async function foldChatStream(site: CallSite, events: AsyncIterable<SseEvent>): Promise<Obj> {
  let content = '';
  let finish: Json = null;
  let usage: Json = null;
  let sawDone = false;
  for await (const ev of events) {
    if (ev.data.trim() === '[DONE]') {
      sawDone = true;
      break;
    }
    const d = eventData(site, ev);
    if (!d) continue;
    if (d.error !== undefined && d.error !== null) throw streamError(site, d);
    if (isObj(d.usage)) usage = d.usage;
    const choice = Array.isArray(d.choices) && isObj(d.choices[0]) ? d.choices[0] : undefined;
    if (!choice) continue;
    if (isObj(choice.delta) && typeof choice.delta.content === 'string') content += choice.delta.content;
    if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
  }
  if (!sawDone && finish === null) throw truncatedStream(site, 'data: [DONE]');
  return {
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
    usage,
  };
}

const ChatResponseSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({ content: z.union([z.string(), z.null()]).optional() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z
    .looseObject({
      prompt_tokens: z.number().optional(),
      completion_tokens: z.number().optional(),
      prompt_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullish(),
    })
    .nullish(),
});

/** The Chat Completions dialect. */
export const chatDialect: WireDialect = {
  path: '/chat/completions',
  headers: (route) => bearerHeaders(route),
  body(route, r, stream) {
    const body: WireBody = {
      model: r.model,
      messages: toChatMessages([
        ...(r.system ? [{ role: 'system' as const, content: r.system }] : []),
        ...withInstructions(r),
      ]),
    };
    const tools = toChatTools(r.tools ?? []);
    if (tools.length > 0) {
      body.tools = tools;
      body.tool_choice = 'none';
    }
    if (r.maxOutputTokens !== undefined)
      body[route.kind === 'openai' ? 'max_completion_tokens' : 'max_tokens'] = r.maxOutputTokens;
    Object.assign(body, forwardedFields(r.requestFields, 'chat'));
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  },
  read(json, site) {
    const p = parseResponse(ChatResponseSchema, json, site, 'chat completion');
    const c = p.choices[0];
    const usage: Usage | undefined = p.usage
      ? {
          ...(p.usage.prompt_tokens !== undefined ? { inputTokens: p.usage.prompt_tokens } : {}),
          ...(p.usage.completion_tokens !== undefined ? { outputTokens: p.usage.completion_tokens } : {}),
          ...(p.usage.prompt_tokens_details?.cached_tokens !== undefined
            ? { cachedInputTokens: p.usage.prompt_tokens_details.cached_tokens }
            : {}),
        }
      : undefined;
    const fr = c.finish_reason;
    return {
      text: c.message.content ?? '',
      finishReason: fr === 'length' ? 'length' : fr === 'stop' ? 'stop' : 'other',
      ...(usage ? { usage } : {}),
    };
  },
  fold: foldChatStream,
  convert: toChatMessages,
};
