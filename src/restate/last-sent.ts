import { z } from 'zod';
import { hashOf } from '../adapters/shared/sync-point.js';
import { MessageSchema, type Message } from '../messages/message.js';
import { decodeList, historyPrint, ListEncoder, ListJsonSchema } from '../runtime/checkpoint-refs.js';
import type { RequestEnvelope } from '../session/index.js';
import type { ProviderUsage } from './provider-usage.js';
import type { ObjectContext, ObjectSharedContext } from './sdk.js';

/**
 * The last request a session object built, kept in its state so the next turn's summary can
 * ask over it (the provider's prompt cache holds it). The object is opened afresh for every
 * call, so a session's own memory of it is gone by then. It is kept by reference: runs of
 * positions into the live history the turn left (which the records give back) and only the
 * messages the projection made itself (a cleared result's stub) in full, so it adds a few
 * hundred bytes to the state, not a second copy of the conversation.
 */

/** State key of the last request built. */
export const LAST_SENT_KEY = 'lastSent';

const LastSentSchema = z.strictObject({
  /** Where the request went: its wire (or provider) and model. */
  to: z.string(),
  /** The history the runs index into: its length and a print of its ends. */
  count: z.number().int().nonnegative(),
  print: z.string().min(1),
  runs: ListJsonSchema,
  written: z.array(MessageSchema),
});
export type LastSent = z.infer<typeof LastSentSchema>;

/** Where a request with this envelope goes; undefined without one (its summary reuses nothing). */
function destination(envelope: RequestEnvelope | undefined): string | undefined {
  if (envelope === undefined) return undefined;
  return `${envelope.wire ?? envelope.provider ?? ''} ${envelope.model}`;
}

/** `request`, the turn's next request, by reference into `history` (the live history the turn left); undefined when it went nowhere known. */
export function lastSentOf(
  request: readonly Message[],
  history: readonly Message[],
  envelope: RequestEnvelope | undefined,
): LastSent | undefined {
  const to = destination(envelope);
  if (to === undefined) return undefined;
  const encoder = new ListEncoder(history);
  const runs = encoder.encode(request);
  return { to, count: history.length, print: historyPrint(history), runs, written: encoder.written };
}

/** Keeps what {@link lastSentOf} made of the turn's request (null: forgets the last one). */
export function keepLastSent(ctx: ObjectContext, kept: LastSent | null): void {
  if (kept === null) ctx.clear(LAST_SENT_KEY);
  else ctx.set<LastSent>(LAST_SENT_KEY, kept);
}

/**
 * The last request built, when the next one goes to the same wire and model and the history
 * still begins with the one it was built on (an `append` since only adds to it); with the
 * provider's count of it when the usage reported covers that very request.
 */
export async function keptLastSent(
  ctx: ObjectSharedContext,
  history: readonly Message[],
  envelope: RequestEnvelope | undefined,
  usage: ProviderUsage | null,
): Promise<{ messages: Message[]; providerTokens?: number } | undefined> {
  const parsed = LastSentSchema.safeParse(await ctx.get<unknown>(LAST_SENT_KEY));
  if (!parsed.success) return undefined;
  const kept = parsed.data;
  const to = destination(envelope);
  if (to === undefined || kept.to !== to || history.length < kept.count) return undefined;
  const base = history.slice(0, kept.count);
  if (historyPrint(base) !== kept.print) return undefined;
  const messages = decodeList(kept.runs, base, kept.written);
  if (messages === undefined || messages.length === 0) return undefined;
  const counted =
    usage !== null && usage.messageCount === messages.length && usage.lastHash === hashOf(messages.at(-1));
  return { messages, ...(counted ? { providerTokens: usage.inputTokens } : {}) };
}
