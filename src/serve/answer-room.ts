import type { Message } from '../messages/message.js';
import { roundTripForHash } from '../adapters/shared/sync-point.js';
import type { ProviderMeta } from '../formats/provider-envelope.js';
import type { ParsedRequest, ProtocolName } from './protocols.js';
import { withNumberAt } from './number-in-text.js';

/** The largest share of the window kept free for the answer, whatever the client asks for. */
export const ANSWER_SHARE = 4;
/** The answer's room when the client names no output limit (never more than the share). */
export const DEFAULT_ANSWER_RESERVE = 8_000;

/**
 * How much of the window the proxy keeps free for the answer: what the client asks for, but at
 * most a quarter of the window (a client asking for 64,000 tokens of a 32,000-token window
 * still gets a request that fits), and {@link DEFAULT_ANSWER_RESERVE} when it asks for nothing.
 */
export function answerReserve(capacity: number, asked: number | undefined): number {
  return Math.min(asked ?? DEFAULT_ANSWER_RESERVE, Math.floor(capacity / ANSWER_SHARE));
}

/**
 * The share of the window a lowered output limit leaves unused: the proxy counts with one
 * tokenizer and the provider with its own, so the input may count a little more upstream.
 */
export const OUTPUT_SAFETY_SHARE = 50;

/**
 * The output limit to send when the client's own cannot fit beside the input: the room that is
 * left less a margin of 1/{@link OUTPUT_SAFETY_SHARE} of the window, or undefined when the
 * client's limit fits (it then goes upstream as it came).
 */
export function loweredOutput(
  capacity: number,
  input: number,
  asked: number | undefined,
): number | undefined {
  if (asked === undefined || input + asked <= capacity) return undefined;
  return Math.max(1, capacity - input - Math.ceil(capacity / OUTPUT_SAFETY_SHARE));
}

/** The fields each protocol names its output limit in. */
const OUTPUT_FIELDS: Record<ProtocolName, readonly string[]> = {
  anthropic: ['max_tokens'],
  'openai-chat': ['max_completion_tokens', 'max_tokens'],
  'openai-responses': ['max_output_tokens'],
  // Gemini names it inside generationConfig.
  gemini: [],
};

/** The request with its output limit set to `n` wherever the client named one. */
export function withOutputLimit(req: ParsedRequest, n: number): ParsedRequest {
  const provider = req.meta.provider as ProviderMeta | undefined;
  if (provider?.envelope === undefined) return req;
  const envelope = { ...provider.envelope };
  for (const field of OUTPUT_FIELDS[req.protocol])
    if (typeof envelope[field] === 'number') envelope[field] = n;
  const config = envelope.generationConfig;
  if (req.protocol === 'gemini' && typeof config === 'object' && config !== null && !Array.isArray(config))
    if (typeof config.maxOutputTokens === 'number')
      envelope.generationConfig = { ...config, maxOutputTokens: n };
  return { ...req, maxOutput: n, meta: { ...req.meta, provider: { ...provider, envelope } } };
}

/**
 * The client's own request text with its output limit set to `n` in place (every other byte as
 * it came), or undefined when a limit it names cannot be found in the text.
 */
export function textWithOutputLimit(text: string, protocol: ProtocolName, n: number): string | undefined {
  const paths =
    protocol === 'gemini'
      ? [['generationConfig', 'maxOutputTokens']]
      : OUTPUT_FIELDS[protocol].map((f) => [f]);
  let out = text;
  let found = false;
  for (const path of paths) {
    const next = withNumberAt(out, path, n);
    if (next !== undefined) {
      out = next;
      found = true;
    }
  }
  return found ? out : undefined;
}

/**
 * Whether two JSON values are the same whatever their key order (the session's validated copies
 * order keys by their schema); absent and undefined keys are alike, and a message's round-trip
 * record counts without its per-request markers. No copy, no hash: most of a request's messages
 * are compared on every request.
 */
function sameJson(a: unknown, b: unknown, key = ''): boolean {
  if (key === 'roundTrip') return sameJson(roundTripForHash(a), roundTripForHash(b), 'record');
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameJson(v, other[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k in x) {
    // Read once: a held text is decoded on each read.
    const v = x[k];
    if (v === undefined) continue;
    defined++;
    if (!sameJson(v, y[k], k)) return false;
  }
  for (const k in y) if (y[k] !== undefined) defined--;
  return defined === 0;
}

/**
 * The projected messages with every one the client sent in this request given back as the
 * client sent it: the session holds the first copy it saw of a message, and a client moves
 * per-request markers (a cache breakpoint) from message to message, which count nothing and
 * must reach the upstream as this request has them. Projection keeps the conversation's end in
 * place (a summary, a cleared result or a dropped message changes what comes before), so each
 * projected message is compared with the sent one as far from the end; one that differs (a
 * summary, a cleared result) goes as the projection has it.
 */
export function asClientSent(
  projected: readonly Message[],
  sent: readonly Message[],
  chain?: readonly string[],
): Message[] {
  const shift = sent.length - projected.length;
  const links = chain?.length === sent.length ? chain : undefined;
  return projected.map((m, i) => {
    const own = sent[i + shift];
    if (own === undefined) return m;
    const link = links?.[i + shift];
    // Matched before to a message with this chain value: the same bytes after the same history.
    if (link !== undefined && matched.get(m) === link) return own;
    if (!sameJson(m, own)) return m;
    if (link !== undefined) matched.set(m, link);
    return own;
  });
}

/**
 * A session's message (an object its history keeps from request to request) and the chain value
 * of the client's message it was found to equal: a later request whose message there has the
 * same value sent the same message after the same history, so it is not compared again. Weak: a
 * closed session's messages take their entries with them.
 */
const matched = new WeakMap<Message, string>();

/** Whether the projection left the client's messages exactly as they came (same objects, same order). */
export function unchanged(projected: readonly Message[], sent: readonly Message[]): boolean {
  return projected.length === sent.length && projected.every((m, i) => m === sent[i]);
}

/** How many tool results go upstream other than the client sent them (cleared or shortened). */
export function changedResults(messages: readonly Message[], sent: readonly Message[]): number {
  const own = new Set(sent);
  return messages.filter((m) => m.role === 'tool' && !own.has(m)).length;
}

/**
 * Tokens of every string a request body holds (keys aside): what the model is given, the
 * fields and blocks the proxy does not model included. A request's own estimate counts only
 * what the session models, so the output limit is checked against this too.
 */
export function bodyTokens(body: string, count: (text: string) => number): number {
  let n = 0;
  JSON.parse(body, (key, value: unknown) => {
    if (typeof value === 'string' && key !== 'model') n += count(value);
    else if (Array.isArray(value)) n += 4 * value.length;
    return value;
  });
  return n;
}
