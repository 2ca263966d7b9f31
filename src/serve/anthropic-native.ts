import type { Json, Message } from '../messages/message.js';
import { BETA_COMPACT } from '../providers/anthropic/headers.js';
import { COMPACT_TRIGGER_FLOOR } from '../providers/anthropic/inline-client.js';
import { isNativeSummary } from '../providers/opaque-items.js';
import { providerMetaFor, type ProviderMeta } from '../formats/provider-envelope.js';

/**
 * What an Anthropic request needs once the session holds a compaction block: the API accepts
 * the block only from a request that carries the compaction beta and declares the compact edit.
 * The edit's trigger is the window itself (never below the API's floor): the proxy never sends
 * more than that, so the upstream never compacts again on its own.
 */

type Headers = Record<string, string | string[]>;

/** The headers with `betas` added to the client's own `anthropic-beta` list (each once). */
export function withBetas(headers: Headers, betas: readonly string[]): Headers {
  if (betas.length === 0) return headers;
  const given = headers['anthropic-beta'];
  const list = (Array.isArray(given) ? given.join(',') : (given ?? ''))
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  for (const b of betas) if (!list.includes(b)) list.push(b);
  return { ...headers, 'anthropic-beta': list.join(',') };
}

/** The compact edit a replaying request declares. */
function replayEdit(window: number): Json {
  return {
    type: 'compact_20260112',
    trigger: { type: 'input_tokens', value: Math.max(COMPACT_TRIGGER_FLOOR, window) },
  };
}

const isObject = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `context_management` with the replay edit added, unless the client already declares a compact edit. */
function managementWithEdit(given: Json | undefined, window: number): Json {
  const cm = isObject(given) ? given : {};
  const edits = Array.isArray(cm.edits) ? cm.edits : [];
  if (edits.some((e) => isObject(e) && typeof e.type === 'string' && e.type.startsWith('compact_')))
    return cm;
  return { ...cm, edits: [...edits, replayEdit(window)] };
}

/** Whether a Messages body sends a compaction block. */
export function sendsCompactionBlock(body: Record<string, unknown>): boolean {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages.some(
    (m) =>
      isObject(m) &&
      Array.isArray(m.content) &&
      m.content.some((b) => isObject(b) && b.type === 'compaction'),
  );
}

/** A Messages body (a summary request) made acceptable for the compaction block it sends. */
export function replayingBody<T extends Record<string, unknown>>(body: T, window: number): T {
  if (!sendsCompactionBlock(body)) return body;
  return { ...body, context_management: managementWithEdit(body.context_management as Json, window) };
}

/** Whether a projected conversation holds a native compaction marker. */
export function holdsCompaction(messages: readonly Message[]): boolean {
  return messages.some(isNativeSummary);
}

/**
 * A forwarded request's conversation and document fields when the session holds a compaction
 * block: the marker goes out as its block alone (the block carries the summary), and the
 * fields declare the compact edit.
 */
export function replayingRequest(
  messages: readonly Message[],
  meta: Record<string, unknown>,
  window: number,
): { messages: Message[]; meta: Record<string, unknown> } {
  const out = messages.map((m) => (isNativeSummary(m) ? { ...m, content: '' } : m));
  const provider = providerMetaFor(meta, 'anthropic');
  if (provider === undefined) return { messages: out, meta };
  const envelope = { ...(provider.envelope ?? {}) };
  envelope.context_management = managementWithEdit(envelope.context_management, window);
  const next: ProviderMeta = { ...provider, envelope };
  return { messages: out, meta: { ...meta, provider: next } };
}

/** The compaction beta, for a request that sends a compaction block. */
export const REPLAY_BETAS = [BETA_COMPACT];
