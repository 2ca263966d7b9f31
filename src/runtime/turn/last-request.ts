import { z } from 'zod';
import type { MessageStore } from '../message-store.js';
import type { SentMessages } from '../turn-runner-types.js';

// The last request sent travels in the turn's store, so every checkpoint of the turn holds it
// (by reference into the history, like every other list) and a resumed turn's summary asks
// over the same messages as the first run would have.

const messagesRef = (turnId: string) => `${turnId}:lastRequest`;
const tokensRef = (turnId: string) => `${turnId}:lastRequest:providerTokens`;

/** The provider's count as a store text holds it. */
const CountSchema = z.coerce.number().int().nonnegative();

/** Puts the last request sent into the turn's store. */
export function keepLastRequest(store: MessageStore, turnId: string, sent: SentMessages): void {
  store.put(messagesRef(turnId), [...sent.messages]);
  if (sent.providerTokens !== undefined) store.putText(tokensRef(turnId), String(sent.providerTokens));
}

/** The last request sent a turn's store holds, or undefined (none was sent, or an older version wrote the store). */
export function keptLastRequest(store: MessageStore, turnId: string): SentMessages | undefined {
  if (!store.lists().has(messagesRef(turnId))) return undefined;
  const tokens = CountSchema.safeParse(store.extras().texts[tokensRef(turnId)]);
  return {
    messages: store.get(messagesRef(turnId)),
    ...(tokens.success ? { providerTokens: tokens.data } : {}),
  };
}
