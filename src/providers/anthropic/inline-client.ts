import { z } from 'zod';
import type { Json, Message } from '../../messages/message.js';
import { aggregateAnthropicUsage, anthropicHeaders } from './headers.js';
import { toAnthropicConversation, toAnthropicTools } from './convert.js';
import type { ResolvedRoute } from '../catalog.js';
import type { CallSite } from '../classify-error.js';
import { ContextCapacityError, ProviderError } from '../../core/errors.js';
import { postJson, postSse, type HttpOptions } from '../http.js';
import { siteOf } from '../dialect.js';
import { NATIVE_SUMMARY_KEY } from '../opaque-items.js';
import { parseResponse } from '../dialect.js';
import { forwardedFields } from '../request-fields.js';
import { foldMessagesStream } from './stream.js';
import type { InlineCompactRequest, InlineCompactResult, NativeInlineClient } from '../types.js';

/**
 * NativeInline: one Anthropic Messages request carrying the context-management
 * edit ladder with `pause_after_compaction`. A usable compaction block becomes an
 * assistant marker message holding the raw block; anything else is a fallback to Local.
 */

/** Edit ladder constants. */
export const CLEAR_THINKING_KEEP_TURNS = 2;
export const CLEAR_TOOL_USES_TRIGGER = 100_000;
export const CLEAR_TOOL_USES_KEEP = 3;
export const COMPACT_TRIGGER_FLOOR = 50_000;
/** Default `max_tokens` when neither the request nor the catalog gives one. */
export const DEFAULT_INLINE_MAX_TOKENS = 4_096;

/** Whether an Anthropic `thinking` config turns thinking on (`enabled` or `adaptive`). */
export function thinkingOn(thinking: Json | undefined): boolean {
  const t = thinking !== null && typeof thinking === 'object' && !Array.isArray(thinking) ? thinking : {};
  return t.type === 'enabled' || t.type === 'adaptive';
}

/**
 * The edit ladder in order; the two clearing edits only with context-edit support, and
 * `clear_thinking` only when the request has thinking on (the API rejects it otherwise).
 */
export function inlineEdits(supportsContextEdits: boolean, instructions?: string, thinking = false): Json[] {
  const compact: { [k: string]: Json } = {
    type: 'compact_20260112',
    trigger: { type: 'input_tokens', value: COMPACT_TRIGGER_FLOOR },
    pause_after_compaction: true,
  };
  if (instructions !== undefined && instructions.trim() !== '') compact.instructions = instructions.trim();
  if (!supportsContextEdits) return [compact];
  const clearThinking: Json[] = thinking
    ? [
        {
          type: 'clear_thinking_20251015',
          keep: { type: 'thinking_turns', value: CLEAR_THINKING_KEEP_TURNS },
        },
      ]
    : [];
  return [
    ...clearThinking,
    {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'input_tokens', value: CLEAR_TOOL_USES_TRIGGER },
      keep: { type: 'tool_uses', value: CLEAR_TOOL_USES_KEEP },
    },
    compact,
  ];
}

/**
 * The `max_tokens` an inline request sends for an answer limit of `maxTokens`: it must exceed
 * an enabled thinking budget, so room for the answer is added on top. The caller sizes
 * the request's input with it.
 */
export function inlineMaxTokens(thinking: Json | undefined, maxTokens: number): number {
  const t = thinking !== null && typeof thinking === 'object' && !Array.isArray(thinking) ? thinking : {};
  const budget = t.type === 'enabled' && typeof t.budget_tokens === 'number' ? t.budget_tokens : 0;
  return budget >= maxTokens ? budget + DEFAULT_INLINE_MAX_TOKENS : maxTokens;
}

/** Extra request fields the inline client accepts beyond the shared contract. */
export interface InlineRequestExtras {
  /** Anthropic `thinking` config, passed through (clear_thinking needs thinking on); wins over `requestFields.thinking`. */
  thinking?: Json;
}

/** Builds the Messages body for an inline compaction request. */
export function inlinePayload(
  request: InlineCompactRequest & InlineRequestExtras,
  defaultMaxTokens = DEFAULT_INLINE_MAX_TOKENS,
): Record<string, Json> {
  const conv = toAnthropicConversation(request.messages, request.system);
  // The caller's thinking config stays as given (the explicit extra wins over the caller's fields).
  const fields = forwardedFields(request.requestFields, 'inline');
  const thinking = request.thinking ?? fields.thinking;
  const body: Record<string, Json> = {
    model: request.model,
    max_tokens: inlineMaxTokens(thinking, request.maxOutputTokens ?? defaultMaxTokens),
    messages: conv.messages,
    context_management: {
      edits: inlineEdits(request.supportsContextEdits, request.instructions, thinkingOn(thinking)),
    },
  };
  if (conv.system !== undefined) body.system = conv.system;
  const tools = toAnthropicTools(request.tools ?? []);
  if (tools.length > 0) {
    body.tools = tools;
    body.tool_choice = { type: 'none' };
  }
  Object.assign(body, fields);
  if (thinking !== undefined) body.thinking = thinking;
  return body;
}

const MessageResponseSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullish(),
  usage: z.unknown().optional(),
});

/** A 400 that rejects the edit ladder itself (unsupported edit, missing beta, thinking off). */
export function isRejectedEdit(err: unknown): boolean {
  if (!ProviderError.isInstance(err) || ContextCapacityError.isInstance(err) || err.info.status !== 400)
    return false;
  return /context_management|clear_thinking|clear_tool_uses|compact_2026|compaction/i.test(err.message);
}

/** Reads an inline compaction answer: the compaction block as a marker message, or why to fall back. */
export function readInlineAnswer(json: unknown, site: CallSite): InlineCompactResult {
  const parsed = parseResponse(MessageResponseSchema, json, site, 'messages');
  const block = parsed.content.find((b) => b.type === 'compaction');
  if (!block) {
    return {
      kind: 'fallback',
      reason: 'no-compaction',
      detail: `stop_reason ${parsed.stop_reason ?? 'null'}`,
    };
  }
  if (typeof block.content !== 'string' || block.content.trim() === '') {
    return { kind: 'fallback', reason: 'null-content', detail: 'compaction block has no summary content' };
  }
  // The raw block (signature, cache_control, unknown fields) rides in reasoningDetails; its
  // summary text is the content, so a Local pass on another model keeps the compacted state.
  const marker: Message = {
    role: 'assistant',
    content: block.content,
    reasoningDetails: [block as Json],
    metadata: { [NATIVE_SUMMARY_KEY]: true },
  };
  const usage = aggregateAnthropicUsage(parsed.usage);
  return usage ? { kind: 'compacted', messages: [marker], usage } : { kind: 'compacted', messages: [marker] };
}

/** Creates the inline client for an Anthropic route. */
export function createInlineClient(
  route: ResolvedRoute,
  opts: HttpOptions = {},
): NativeInlineClient & {
  compactInline(
    request: InlineCompactRequest & InlineRequestExtras,
    signal?: AbortSignal,
  ): Promise<InlineCompactResult>;
} {
  const base = siteOf(route);
  return {
    provider: route.label,
    model: route.model,
    async compactInline(request, signal) {
      const site = { ...base, model: request.model };
      const body = inlinePayload(
        request,
        Math.min(route.maxOutputTokens ?? DEFAULT_INLINE_MAX_TOKENS, DEFAULT_INLINE_MAX_TOKENS),
      );
      if (route.streamingOnly) body.stream = true;
      const spec = { url: `${route.baseUrl}/messages`, headers: anthropicHeaders(route, body), body, site };
      try {
        const json = route.streamingOnly
          ? await postSse(spec, (ev) => foldMessagesStream(site, ev), opts, signal)
          : await postJson(spec, opts, signal);
        return readInlineAnswer(json, site);
      } catch (err) {
        if (isRejectedEdit(err)) {
          return { kind: 'fallback', reason: 'rejected-edit', detail: (err as ProviderError).message };
        }
        throw err;
      }
    },
  };
}
