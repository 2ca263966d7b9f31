import { hash } from 'node:crypto';
import { HOLD_MIN_LENGTH } from '../messages/held-text.js';
import type { History, Json, Message } from '../messages/message.js';
import { counterFor, type EncodingName, type TokenCounter } from './counters.js';
import { createTextCache } from './text-cache.js';

/** VT Code's constants: per message, per tool call, per image or file part. */
export const MESSAGE_OVERHEAD = 4;
export const TOOL_CALL_OVERHEAD = 20;
export const MEDIA_PART_TOKENS = 1_000;

/** Metadata key of a native compaction marker whose text is the readable summary of its opaque block. */
export const NATIVE_SUMMARY_KEY = 'nativeSummary';

/**
 * Metadata flag of a message whose opaque items all go to the provider as they came (Gemini's
 * parts the proxy does not model): their whole JSON is counted.
 */
export const OPAQUE_SENT = 'opaqueSent';

/** Estimates tokens of messages and histories, caching per message. */
export interface Estimator {
  readonly encoding: EncodingName;
  /** Tokens of a bare string (no message overhead). */
  text(text: string): number;
  /**
   * Tokens of one message, overheads and the strings of its opaque provider items included (the
   * whole JSON of items marked {@link OPAQUE_SENT}).
   */
  message(m: Message): number;
  /** Sum of {@link Estimator.message} over a history. */
  history(h: History): number;
  /** Cache statistics, for benchmarks and tests. */
  stats(): { messageHits: number; messageMisses: number; textHits: number; textMisses: number };
}

/** Options of {@link createEstimator}: the encoding (default o200k_base), a counter override, cache size. */
export interface EstimatorOptions {
  encoding?: EncodingName;
  /** Counter override (tests, custom tokenizers). */
  counter?: TokenCounter;
  /** Max distinct long strings remembered by their text, the longest by its digest (default 50,000). */
  textCacheSize?: number;
}

// Strings shorter than this are cheaper to re-count than to hash into the cache.
const TEXT_CACHE_MIN_LENGTH = 64;

/** Tokens of every string in a JSON value (an opaque item's text, signature or encrypted payload). */
function jsonStrings(v: Json, text: (t: string) => number): number {
  if (typeof v === 'string') return text(v);
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) n += jsonStrings(x, text);
  return n;
}

/**
 * Creates an estimator. Two cache levels: message objects by identity (a WeakMap, so a
 * growing session re-estimates only new messages), and long strings by value (so a
 * re-imported or copied message with the same text is not re-tokenized); the longest by a
 * digest of their text, so the cache never keeps a history's texts alive.
 */
export function createEstimator(options: EstimatorOptions = {}): Estimator {
  const counter = options.counter ?? counterFor(options.encoding ?? 'o200k_base');
  const textCacheSize = options.textCacheSize ?? 50_000;
  const byMessage = new WeakMap<Message, number>();
  const byText = createTextCache(textCacheSize);
  const s = { messageHits: 0, messageMisses: 0, textHits: 0, textMisses: 0 };

  function text(t: string): number {
    if (t.length < TEXT_CACHE_MIN_LENGTH || textCacheSize === 0) return counter.count(t);
    // A long text is remembered by its digest: kept as a key, the text itself would stay in
    // memory beside the bytes its message holds it as.
    const key = t.length < HOLD_MIN_LENGTH ? t : hash('sha1', t, 'base64');
    const hit = byText.get(key);
    if (hit !== undefined) {
      s.textHits++;
      return hit;
    }
    s.textMisses++;
    const n = counter.count(t);
    byText.set(key, n);
    return n;
  }

  function compute(m: Message): number {
    let n = MESSAGE_OVERHEAD;
    if (typeof m.content === 'string') n += text(m.content);
    else for (const part of m.content) n += part.type === 'text' ? text(part.text) : MEDIA_PART_TOKENS;
    if (m.toolCalls)
      for (const c of m.toolCalls) {
        n += TOOL_CALL_OVERHEAD + text(c.name) + text(c.arguments);
        if (c.freeformInput !== undefined) n += text(c.freeformInput);
        if (c.thoughtSignature !== undefined) n += text(c.thoughtSignature);
      }
    if (m.toolCallId !== undefined) n += text(m.toolCallId);
    // Opaque items (thinking with its signature, encrypted reasoning, unknown blocks) go upstream
    // verbatim and take room there. A native compaction marker's text already stands for its block.
    if (m.metadata?.[OPAQUE_SENT] === true)
      for (const item of m.reasoningDetails ?? []) n += text(JSON.stringify(item));
    else if (m.reasoningDetails && m.metadata?.[NATIVE_SUMMARY_KEY] !== true)
      for (const d of m.reasoningDetails) n += jsonStrings(d, text);
    return n;
  }

  function message(m: Message): number {
    const hit = byMessage.get(m);
    if (hit !== undefined) {
      s.messageHits++;
      return hit;
    }
    s.messageMisses++;
    const n = compute(m);
    byMessage.set(m, n);
    return n;
  }

  return {
    encoding: counter.name,
    text,
    message,
    history: (h) => {
      let total = 0;
      for (const m of h) total += message(m);
      return total;
    },
    stats: () => ({ ...s }),
  };
}
