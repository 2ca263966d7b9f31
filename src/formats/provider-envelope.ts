import { put } from '../messages/json-copy.js';
import type { Json } from '../messages/message.js';
import { stringifyWithRawNumbers, withRawNumbers } from './raw-numbers.js';

/** How a provider document was laid out, so an export to the same format can match it. */
export type DocumentShape = 'array' | 'object' | 'jsonl';

/**
 * `ImportedSession.meta.provider`: the source format, its layout and the top-level keys
 * around the message list (model, tools, max_tokens …), kept verbatim for export.
 */
export interface ProviderMeta {
  format: string;
  shape: DocumentShape;
  envelope?: Record<string, Json>;
}

/** Reads `meta.provider` when it belongs to `format`. */
export function providerMetaFor(
  meta: Record<string, unknown> | undefined,
  format: string,
): ProviderMeta | undefined {
  const p = meta?.provider as ProviderMeta | undefined;
  return p && typeof p === 'object' && p.format === format ? p : undefined;
}

/** Serializes a provider document in the given shape (JSON pretty-printed, JSONL one item a line). */
export function writeDocument(
  items: Json[],
  listKey: string,
  shape: DocumentShape,
  envelope: Record<string, Json> = {},
): string {
  const json = stringifyWithRawNumbers; // raw number texts written back as they were
  if (shape === 'jsonl') return items.map((i) => json(i)).join('\n') + (items.length ? '\n' : '');
  if (shape === 'array') return `${json(items, 2)}\n`;
  const doc: Record<string, Json> = {};
  let placed = false;
  // Keep the list where it was among the envelope keys when we know (envelope order).
  for (const [k, v] of Object.entries(envelope)) {
    if (k === listKey) {
      doc[k] = items;
      placed = true;
    } else put(doc, k, v);
  }
  if (!placed) doc[listKey] = items;
  return `${json(doc, 2)}\n`;
}

/** The envelope of an object document: every top-level key, with the list key as a placeholder. */
export function envelopeOf(doc: Record<string, unknown>, listKey: string): Record<string, Json> {
  const env: Record<string, Json> = {};
  const exact = withRawNumbers(doc); // round trips: `"temperature": 1.0` stays 1.0
  for (const [k, v] of Object.entries(exact)) put(env, k, k === listKey ? null : (v as Json));
  return env;
}
