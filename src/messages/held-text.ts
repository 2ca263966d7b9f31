import type { Message } from './message.js';

/*
 * A long-lived history holds its long texts as UTF-8 bytes. V8 keeps a string with any
 * character above U+00FF at two bytes a character, so a tool result of source code or prose
 * with one arrow or dash in it costs twice its size in UTF-8. A held text is packed into a
 * one-byte string of its UTF-8 bytes and read back through a getter, so every reader still
 * sees a plain string: JSON, spreads, copies and comparisons see the same message as before.
 */

/**
 * Texts shorter than this stay as they are: the getter costs about as much as they would save.
 * Caches that outlive a request key texts this long by a digest, never by the text itself.
 */
export const HOLD_MIN_LENGTH = 512;

/** A character V8 cannot keep in a one-byte string. */
const WIDE = /[^\0-\xff]/;

// Node 20 has String.prototype.isWellFormed; the ES2022 library types do not declare it.
const wellFormed = (v: string): boolean => (v as string & { isWellFormed(): boolean }).isWellFormed();

/*
 * Packing and reading a held text go through one buffer kept for it (1 MiB once a text needs
 * more than 64 KiB; a longer text gets one of its own): a buffer per text is memory outside the
 * JavaScript heap, freed only when a collection finds it. Each use writes and reads it in one go,
 * so no other use comes in between.
 */
const SCRATCH_MAX_BYTES = 1024 * 1024;
let scratch = Buffer.allocUnsafeSlow(64 * 1024);
/** A buffer of at least `bytes`: the shared one, or one of its own beyond {@link SCRATCH_MAX_BYTES}. */
function scratchOf(bytes: number): Buffer {
  if (bytes > SCRATCH_MAX_BYTES) return Buffer.allocUnsafeSlow(bytes);
  if (scratch.length < bytes) scratch = Buffer.allocUnsafeSlow(SCRATCH_MAX_BYTES);
  return scratch;
}

/** The text whose UTF-8 bytes `packed` holds one a character. */
function utf8Of(packed: string): string {
  const b = scratchOf(packed.length);
  return b.toString('utf8', 0, b.write(packed, 'latin1'));
}

/** The fields whose texts may be held. */
export type HeldKey = 'content' | 'reasoning' | 'text' | 'arguments' | 'freeformInput';

// One getter and one setter per field, shared by every held object: objects held alike share
// their hidden class (a getter of their own would give each a class of its own). The bytes sit
// under a symbol that is not enumerable, so JSON, spreads and key lists never see them.
const accessors = new Map<HeldKey, { bytes: symbol; get(): string; set(v: unknown): void }>();
function accessorOf(key: HeldKey) {
  let a = accessors.get(key);
  if (a !== undefined) return a;
  const bytes = Symbol(`held ${key}`);
  a = {
    bytes,
    get(this: Record<symbol, string>) {
      return utf8Of(this[bytes]!);
    },
    // A writer gets a plain property back, as if the text had never been held.
    set(this: Record<symbol, unknown>, value: unknown) {
      delete this[bytes];
      Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true });
    },
  };
  accessors.set(key, a);
  return a;
}

/**
 * The UTF-8 bytes of `v` packed into a one-byte string, when holding them saves memory: a long
 * text with a wide character whose UTF-8 is at most 3/4 of its two bytes a character (text that
 * is mostly CJK or emoji is smaller as it is). A text with a lone surrogate stays as it is:
 * UTF-8 cannot hold one, so it would read back as U+FFFD and no longer be the text sent.
 */
function packed(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.length < HOLD_MIN_LENGTH || !WIDE.test(v)) return undefined;
  if (!wellFormed(v)) return undefined;
  // At most three bytes a UTF-16 unit.
  const b = scratchOf(3 * v.length);
  const n = b.write(v, 'utf8');
  return n <= 1.5 * v.length ? b.toString('latin1', 0, n) : undefined;
}

/**
 * A copy of `source` (same keys, same order) whose `keys` texts worth it are held as bytes and
 * whose `replaced` fields get new values; `source` itself when there is nothing to change.
 */
function heldCopy<T extends object>(source: T, keys: readonly HeldKey[], replaced: Partial<T> = {}): T {
  const record = source as Record<string, unknown>;
  const held = new Map<string, string>();
  for (const k of keys) {
    const p = packed(k in replaced ? (replaced as Record<string, unknown>)[k] : record[k]);
    if (p !== undefined) held.set(k, p);
  }
  if (held.size === 0 && Object.keys(replaced).length === 0) return source;
  const out: Record<string | symbol, unknown> = {};
  for (const k of Object.keys(record)) {
    const p = held.get(k);
    if (p === undefined) {
      out[k] = k in replaced ? (replaced as Record<string, unknown>)[k] : record[k];
      continue;
    }
    const { bytes, get, set } = accessorOf(k as HeldKey);
    Object.defineProperty(out, bytes, { value: p, writable: true, enumerable: false, configurable: true });
    Object.defineProperty(out, k, { get, set, enumerable: true, configurable: true });
  }
  return out as T;
}

/** The list with each item held, the same list when no item changed. */
function heldList<T extends object>(items: readonly T[], keys: readonly HeldKey[]): T[] | undefined {
  const out = items.map((x) => heldCopy(x, keys));
  return out.some((x, i) => x !== items[i]) ? out : undefined;
}

/**
 * A message with its long texts (content, text parts, reasoning, tool call arguments and
 * inputs) held as UTF-8: a copy that reads the same, or the message itself when none is long
 * and wide. For messages a history keeps for long; a reader decodes the text on each read.
 */
export function heldMessage(m: Message): Message {
  const parts = Array.isArray(m.content) ? heldList(m.content, ['text']) : undefined;
  const calls = m.toolCalls !== undefined ? heldList(m.toolCalls, ['arguments', 'freeformInput']) : undefined;
  return heldCopy(m, ['content', 'reasoning'], {
    ...(parts !== undefined ? { content: parts } : {}),
    ...(calls !== undefined ? { toolCalls: calls } : {}),
  });
}

/** The first `n` UTF-16 units of `owner[key]` (fewer when it is shorter), decoding no more of a held text. */
function startOf(owner: object, key: HeldKey, n: number): string {
  const packed = (owner as Record<symbol, string | undefined>)[accessorOf(key).bytes];
  // A UTF-16 unit takes at most 3 bytes of UTF-8 and a surrogate pair 4, so these bytes hold
  // the first n units whole (a pair cut at the n-th unit too).
  if (packed !== undefined) return utf8Of(packed.slice(0, 3 * n + 1)).slice(0, n);
  const text = (owner as Record<string, unknown>)[key];
  return typeof text === 'string' ? text.slice(0, n) : '';
}

/**
 * Whether a message's text (its content, or its text parts joined) starts with `prefix`,
 * decoding no more of a held text than the prefix needs: a check made on every message of
 * every request.
 */
export function textStartsWith(m: Message, prefix: string): boolean {
  const n = prefix.length;
  if (isHeld(m, 'content')) return startOf(m, 'content', n) === prefix;
  const { content } = m;
  if (typeof content === 'string') return content.startsWith(prefix);
  let start = '';
  for (const part of content) {
    if (start.length >= n) break;
    if (part.type === 'text') start += startOf(part, 'text', n - start.length);
  }
  return start.startsWith(prefix);
}

/** Whether `owner[key]` is held as bytes (read through a getter). */
export function isHeld(owner: object, key: HeldKey): boolean {
  return accessorOf(key).bytes in owner;
}
