import { precount, type EncodingName } from '../estimate/counters.js';
import type { Conversations } from '../adapters/shared/conversations.js';
import type { ParsedRequest } from './protocols.js';

/** Every string inside a value (object keys aside). */
function* stringsOf(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const v of value) yield* stringsOf(v);
  else if (value !== null && typeof value === 'object')
    for (const v of Object.values(value)) yield* stringsOf(v);
}

/** The texts of a request its session has not counted yet: all of them for a session not in memory. */
function* newTexts(conversations: Conversations, id: string, parsed: ParsedRequest): Generator<string> {
  const open = conversations.session(id) !== undefined;
  const synced = open ? (conversations.syncedHashes(id)?.length ?? 0) : 0;
  if (!open) {
    yield* stringsOf(parsed.prefix);
    yield* stringsOf(parsed.envelope);
  }
  for (let i = synced; i < parsed.messages.length; i++) yield* stringsOf(parsed.messages[i]);
}

/**
 * Counts the tokens of what is new in a request before its projection, in slices with other
 * requests served between them: the projection counts synchronously, and a large body counted
 * there would hold every other client for as long. Call the result once the projection is done.
 */
export function warmCounts(
  conversations: Conversations,
  id: string,
  parsed: ParsedRequest,
): Promise<() => void> {
  const encoding: EncodingName = conversations.session(id)?.estimator.encoding ?? 'o200k_base';
  return precount(encoding, newTexts(conversations, id, parsed));
}
