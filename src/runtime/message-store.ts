import { z } from 'zod';
import { MessageSchema, type Message } from '../messages/message.js';
import { InternalError } from '../core/errors.js';

/**
 * Holds the message arrays and summary texts the machines refer to by string ref, plus the
 * results of provider calls keyed by `${turnId}:${actor}:${band}:${attempt}` so a restored
 * turn that re-invokes an in-flight actor reuses a finished call instead of paying twice.
 * Serializable as one JSON object (saved next to the persisted machine snapshot).
 */
export class MessageStore {
  private readonly messages = new Map<string, readonly Message[]>();
  private readonly texts = new Map<string, string>();
  private readonly results = new Map<string, unknown>();

  /** Stores `messages` under `ref` (by reference: a no-op turn copies nothing) and returns `ref`. */
  put(ref: string, messages: readonly Message[]): string {
    this.messages.set(ref, messages);
    return ref;
  }

  /** The messages under `ref`; throws when the ref is unknown (a wiring bug, not user input). */
  get(ref: string): readonly Message[] {
    const m = this.messages.get(ref);
    if (m === undefined) throw new InternalError(`message store has no entry "${ref}"`);
    return m;
  }

  /** Stores a summary text. */
  putText(ref: string, text: string): string {
    this.texts.set(ref, text);
    return ref;
  }

  /** A stored summary text; throws when unknown. */
  getText(ref: string): string {
    const t = this.texts.get(ref);
    if (t === undefined) throw new InternalError(`message store has no text "${ref}"`);
    return t;
  }

  /** Runs `fn` once per key: a later call with the same key returns the recorded JSON result. */
  async once<T>(key: string, fn: () => Promise<T>): Promise<T> {
    if (this.results.has(key)) return this.results.get(key) as T;
    const value = await fn();
    this.results.set(key, value);
    return value;
  }

  /** Every message list by ref (read-only view, for the checkpoint by reference). */
  lists(): ReadonlyMap<string, readonly Message[]> {
    return this.messages;
  }

  /** Summary texts and recorded provider results as plain JSON. */
  extras(): Pick<StoreJson, 'texts' | 'results'> {
    return { texts: Object.fromEntries(this.texts), results: Object.fromEntries(this.results) };
  }

  /** Plain JSON form. */
  toJSON(): StoreJson {
    return {
      messages: Object.fromEntries([...this.messages].map(([k, v]) => [k, [...v]])),
      texts: Object.fromEntries(this.texts),
      results: Object.fromEntries(this.results),
    };
  }

  /** Rebuilds a store from {@link MessageStore.toJSON} output (validated). */
  static fromJSON(json: unknown): MessageStore {
    return MessageStore.from(StoreJsonSchema.parse(json));
  }

  /** A store holding exactly these lists, texts and results (already validated). */
  static from(parsed: StoreJson): MessageStore {
    const store = new MessageStore();
    for (const [k, v] of Object.entries(parsed.messages)) store.put(k, v);
    for (const [k, v] of Object.entries(parsed.texts)) store.putText(k, v);
    for (const [k, v] of Object.entries(parsed.results)) store.results.set(k, v);
    return store;
  }
}

/** Zod schema of a serialized {@link MessageStore}. */
export const StoreJsonSchema = z.object({
  messages: z.record(z.string(), z.array(MessageSchema)),
  texts: z.record(z.string(), z.string()),
  results: z.record(z.string(), z.unknown()),
});
/** Serialized {@link MessageStore}. */
export type StoreJson = z.infer<typeof StoreJsonSchema>;
