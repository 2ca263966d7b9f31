import type { History, Message } from '../messages/message.js';
import { counterFor, type EncodingName, type TokenCounter } from './counters.js';
import { createTextCache } from './text-cache.js';

/** VT Code's constants: per message, per tool call, per image or file part. */
export const MESSAGE_OVERHEAD = 4;
export const TOOL_CALL_OVERHEAD = 20;
export const MEDIA_PART_TOKENS = 1_000;

/**
 * Metadata flag of a message whose opaque items all go to the provider as they came (Gemini's
 * parts the proxy does not model): their JSON is counted.
 */
export const OPAQUE_SENT = 'opaqueSent';

/** Estimates tokens of messages and histories, caching per message. */
export interface Estimator {
  readonly encoding: EncodingName;
  /** Tokens of a bare string (no message overhead). */
  text(text: string): number;
  /**
   * Tokens of one message, overheads included; opaque provider items are not counted, except
   * where the importer marks them as sent exactly as they are ({@link OPAQUE_SENT}).
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
  /** Max distinct long strings remembered by text identity (default 50,000). */
  textCacheSize?: number;
}

// Strings shorter than this are cheaper to re-count than to hash into the cache.
const TEXT_CACHE_MIN_LENGTH = 64;

/**
 * Creates an estimator. Two cache levels: message objects by identity (a WeakMap, so a
 * growing session re-estimates only new messages), and long strings by value (so a
 * re-imported or copied message with the same text is not re-tokenized).
 */
export function createEstimator(options: EstimatorOptions = {}): Estimator {
  const counter = options.counter ?? counterFor(options.encoding ?? 'o200k_base');
  const textCacheSize = options.textCacheSize ?? 50_000;
  const byMessage = new WeakMap<Message, number>();
  const byText = createTextCache(textCacheSize);
  const s = { messageHits: 0, messageMisses: 0, textHits: 0, textMisses: 0 };

  function text(t: string): number {
    if (t.length < TEXT_CACHE_MIN_LENGTH || textCacheSize === 0) return counter.count(t);
    const hit = byText.get(t);
    if (hit !== undefined) {
      s.textHits++;
      return hit;
    }
    s.textMisses++;
    const n = counter.count(t);
    byText.set(t, n);
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
    if (m.metadata?.[OPAQUE_SENT] === true)
      for (const item of m.reasoningDetails ?? []) n += text(JSON.stringify(item));
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
