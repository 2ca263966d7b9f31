import { z } from 'zod';
import { HistorySchema, JsonObjectSchema, type Message } from '../messages/message.js';
import { placeOf, validate } from './input-error.js';
import { parseJson, type SessionText } from './json-text.js';
import { isObj } from './detect.js';
import type { ImportResult, SessionFormat } from './types.js';

/** The marker of Compactor's own session file. */
export const CANONICAL_FORMAT = 'compactor.canonical';
/** The version this build reads and writes. */
export const CANONICAL_VERSION = 1;

/**
 * Compactor's canonical session document:
 * `{"format":"compactor.canonical","version":1,"id"?:string,"meta"?:{…},"messages":[Message…]}`
 * where each message is the canonical message model (src/messages/message.ts), metadata included.
 */
export const CanonicalDocSchema = z.object({
  format: z.literal(CANONICAL_FORMAT),
  version: z.literal(CANONICAL_VERSION),
  id: z.string().optional(),
  meta: JsonObjectSchema.optional(),
  messages: HistorySchema,
});

/** Imports a canonical session document, validating every message against the message schema. */
export function importCanonical(text: SessionText, fileName?: string): ImportResult {
  const doc = validate(CanonicalDocSchema, parseJson(text, fileName), placeOf(fileName));
  return {
    format: 'canonical',
    file: fileName,
    sessions: [{ id: doc.id ?? 'main', messages: doc.messages, meta: doc.meta ?? {} }],
  };
}

/** Writes messages as a canonical session document (pretty JSON, metadata kept). */
export function exportCanonical(messages: readonly Message[], opts: { id?: string } = {}): string {
  const doc = {
    format: CANONICAL_FORMAT,
    version: CANONICAL_VERSION,
    ...(opts.id !== undefined ? { id: opts.id } : {}),
    messages,
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The canonical format: a document that names itself. */
export const canonicalFormat: SessionFormat<'canonical'> = {
  name: 'canonical',
  detect: [{ kind: 'document', order: 10, test: (doc) => isObj(doc) && doc.format === CANONICAL_FORMAT }],
  import: importCanonical,
  importDocument: importCanonical,
};
