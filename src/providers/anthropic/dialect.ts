import { z } from 'zod';
import { parseResponse, withInstructions, type WireBody, type WireDialect } from '../dialect.js';
import { forwardedFields } from '../request-fields.js';
import { toAnthropicConversation, toAnthropicTools, type AnthropicConversation } from './convert.js';
import { aggregateAnthropicUsage, anthropicHeaders } from './headers.js';
import { createInlineClient } from './inline-client.js';
import { foldMessagesStream } from './stream.js';

/**
 * The Anthropic Messages dialect (Anthropic and Anthropic-compatible endpoints): Local
 * summaries over `POST /messages`, streamed answers folded into a `Message`, and native
 * compaction inside a generate request carrying the context-edit ladder (inline-client.ts).
 */

const MessagesResponseSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullish(),
  usage: z.unknown().optional(),
});

/**
 * A cache breakpoint on the last block before the instructions (the end of the request last
 * sent): the cache entry that request wrote there is read back instead of paid for again.
 */
function markPrefixEnd(messages: AnthropicConversation['messages']): void {
  const blocks = messages.flatMap((m) => m.content);
  const end = blocks.at(-2);
  if (end === undefined || typeof end !== 'object' || end === null || Array.isArray(end)) return;
  // Thinking blocks take no breakpoint of their own.
  if (end.type === 'thinking' || end.type === 'redacted_thinking') return;
  end.cache_control = { type: 'ephemeral' };
}

/** The Anthropic Messages dialect. */
export const anthropicDialect: WireDialect = {
  path: '/messages',
  headers: (route, body) => anthropicHeaders(route, body),
  body(route, r, stream) {
    const conv = toAnthropicConversation(withInstructions(r), r.system);
    const body: WireBody = {
      model: r.model,
      max_tokens: r.maxOutputTokens ?? Math.min(route.maxOutputTokens ?? 8_192, 8_192),
      messages: conv.messages,
    };
    if (conv.system !== undefined) body.system = conv.system;
    const tools = toAnthropicTools(r.tools ?? []);
    // Over the last request sent, tool use stays as the agent had it: a changed tool_choice
    // would cost the cached messages.
    if (tools.length > 0) {
      body.tools = tools;
      if (r.prefix !== true) body.tool_choice = { type: 'none' };
    }
    if (r.prefix === true) markPrefixEnd(conv.messages);
    Object.assign(body, forwardedFields(r.requestFields, 'messages'));
    if (stream) body.stream = true;
    return body;
  },
  read(json, site) {
    const p = parseResponse(MessagesResponseSchema, json, site, 'messages');
    const text = p.content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('');
    const sr = p.stop_reason;
    const finishReason =
      sr === 'max_tokens' || sr === 'model_context_window_exceeded'
        ? 'length'
        : sr === 'end_turn' || sr === 'stop_sequence'
          ? 'stop'
          : 'other';
    const usage = aggregateAnthropicUsage(p.usage);
    return { text, finishReason, ...(usage ? { usage } : {}) };
  },
  fold: foldMessagesStream,
  convert: (history) => toAnthropicConversation(history),
  native: { strategy: 'nativeInline', client: createInlineClient },
};
