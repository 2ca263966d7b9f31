import type { Json, Message } from '../messages/message.js';
import { NATIVE_SUMMARY_KEY } from '../estimate/estimator.js';

/**
 * Helpers for opaque provider items in `reasoningDetails`. An entry may be a JSON
 * object or a JSON string holding one; both are read the same way and
 * replayed exactly as stored.
 */

/**
 * Metadata key of a native compaction marker whose text content is the readable summary of
 * its opaque block (an Anthropic compaction block's `content`). Strategies that cannot replay
 * the block send the text instead; the Anthropic replay sends the block alone.
 */
export { NATIVE_SUMMARY_KEY } from '../estimate/estimator.js';

/** Whether a message is a native compaction marker carrying its summary text. */
export function isNativeSummary(m: Message): boolean {
  return m.metadata?.[NATIVE_SUMMARY_KEY] === true;
}

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** Reads one `reasoningDetails` entry as an object, or undefined when it is not one. */
export function asItem(entry: Json): JsonObject | undefined {
  let v: Json = entry;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v) as Json;
    } catch {
      return undefined;
    }
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;
}

/** All object items of a message's `reasoningDetails`. */
export function itemsOf(m: Message): JsonObject[] {
  return (m.reasoningDetails ?? []).map(asItem).filter((x): x is JsonObject => x !== undefined);
}

/** Anthropic compaction block: `type:"compaction"` with a `content` key (string or null). */
export function isAnthropicCompaction(item: JsonObject): boolean {
  return item.type === 'compaction' && 'content' in item;
}

/** Anthropic thinking or redacted_thinking block. */
export function isAnthropicThinking(item: JsonObject): boolean {
  return item.type === 'thinking' || item.type === 'redacted_thinking';
}

const ANTHROPIC_BLOCK_TYPES = new Set([
  'thinking',
  'redacted_thinking',
  'text',
  'tool_use',
  'tool_result',
  'server_tool_use',
  'advisor',
  'fallback',
  'anthropic_block_order',
]);

/**
 * OpenAI/xAI Responses opaque item (encrypted reasoning, compaction, or any other output
 * item kept verbatim): typed, not an Anthropic block, not an OpenRouter `reasoning.*` detail.
 */
export function isResponsesOpaque(item: JsonObject): boolean {
  const t = item.type;
  if (typeof t !== 'string' || t.startsWith('reasoning.')) return false;
  if (isAnthropicCompaction(item)) return false;
  return !ANTHROPIC_BLOCK_TYPES.has(t);
}
