import { copyOfJson } from '../messages/json-copy.js';
import { MessageSchema, type Message, type ToolCall } from '../messages/message.js';
import { parseOrThrow } from './options.js';

/**
 * A quick check for the plainest messages of a `history` option: true only when the value is
 * made of plain objects and arrays with exactly the fields MessageSchema keeps, so its parse
 * would succeed and return an equal copy, which the history check then drops anyway. Anything
 * else (false) goes through MessageSchema as before. zod copies every object it parses: for
 * 100,000 imported messages those copies were about 24 MB that V8 kept until the process
 * ended.
 */

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const OPTIONAL_TEXT = ['toolCallId', 'toolName', 'reasoning'] as const;
const MESSAGE_KEYS = new Set([
  'role',
  'content',
  'toolCalls',
  ...OPTIONAL_TEXT,
  'reasoningDetails',
  'metadata',
]);
const REQUIRED_CALL_KEYS = new Set(['id', 'name', 'arguments']);
const CALL_KEYS = new Set([...REQUIRED_CALL_KEYS, 'freeformInput', 'thoughtSignature']);

export function isPlainMessage(v: unknown): boolean {
  if (!isPlainObject(v) || !hasOnlyKeys(v, MESSAGE_KEYS)) return false;
  if (typeof v.role !== 'string' || !ROLES.has(v.role) || !isPlainContent(v.content)) return false;
  for (const k of OPTIONAL_TEXT) if (k in v && typeof v[k] !== 'string') return false;
  if ('toolCalls' in v && !(isPlainArray(v.toolCalls) && everyItem(v.toolCalls, isPlainCall))) return false;
  if (
    'reasoningDetails' in v &&
    !(isPlainArray(v.reasoningDetails) && everyItem(v.reasoningDetails, (x) => isJson(x)))
  )
    return false;
  return !('metadata' in v) || (isPlainObject(v.metadata) && isJsonObject(v.metadata));
}

/** Validated copies of messages given to a session; a bad one throws naming `where` and its index. */
export function validatedCopies(messages: readonly Message[], where: string): Message[] {
  return messages.map((m, i) =>
    isPlainMessage(m) ? copyOfPlainMessage(m) : parseOrThrow(MessageSchema, m, `${where}[${i}]`),
  );
}

/**
 * The copy MessageSchema's parse returns for a message {@link isPlainMessage} says yes to: its
 * fields in the schema's order, every object and array new, the texts shared. zod walks every
 * value of `metadata` and `reasoningDetails` through its recursive JSON schema; a turn's
 * pending messages came from a client's body, so that walk cost more than the turn's clearing.
 */
export function copyOfPlainMessage(m: Message): Message {
  const out: Record<string, unknown> = {
    role: m.role,
    // Plain content parts are text parts with exactly these two fields.
    content:
      typeof m.content === 'string'
        ? m.content
        : m.content.map((p) => ({ type: 'text', text: (p as { text: string }).text })),
  };
  if (m.toolCalls !== undefined) out.toolCalls = m.toolCalls.map(copyOfCall);
  for (const k of OPTIONAL_TEXT) if (k in m) out[k] = m[k];
  if (m.reasoningDetails !== undefined) out.reasoningDetails = m.reasoningDetails.map(copyOfJson);
  if (m.metadata !== undefined) out.metadata = copyOfJson(m.metadata);
  return out as Message;
}

/** A tool call's fields in ToolCallSchema's order. */
function copyOfCall(c: ToolCall): ToolCall {
  const out: ToolCall = { id: c.id, name: c.name, arguments: c.arguments };
  if ('freeformInput' in c) out.freeformInput = c.freeformInput;
  if ('thoughtSignature' in c) out.thoughtSignature = c.thoughtSignature;
  return out;
}

/** A string, or an array of text parts with exactly `type` and `text` (other parts: the schema decides). */
function isPlainContent(c: unknown): boolean {
  if (typeof c === 'string') return true;
  return (
    isPlainArray(c) &&
    everyItem(
      c,
      (p) =>
        isPlainObject(p) && Object.keys(p).length === 2 && p.type === 'text' && typeof p.text === 'string',
    )
  );
}

function isPlainCall(c: unknown): boolean {
  if (!isPlainObject(c) || !hasOnlyKeys(c, CALL_KEYS)) return false;
  for (const k of CALL_KEYS)
    if ((REQUIRED_CALL_KEYS.has(k) || k in c) && typeof c[k] !== 'string') return false;
  return true;
}

function isJson(v: unknown, depth = 0): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (depth > MAX_DEPTH) return false; // very deep values: the schema decides
  if (isPlainArray(v)) return everyItem(v, (x) => isJson(x, depth + 1));
  return isPlainObject(v) && isJsonObject(v, depth + 1);
}

const MAX_DEPTH = 64;

function isJsonObject(o: Record<string, unknown>, depth = 0): boolean {
  for (const k in o) if (!isJson(o[k], depth)) return false;
  return true;
}

/** Own keys all in `allowed`, each an enumerable data property (no symbols, getters or inherited keys). */
function hasOnlyKeys(o: object, allowed: ReadonlySet<string>): boolean {
  const keys = Reflect.ownKeys(o);
  for (const k of keys) {
    if (typeof k !== 'string' || !allowed.has(k)) return false;
    const d = Object.getOwnPropertyDescriptor(o, k);
    if (!d || !d.enumerable || !('value' in d) || d.value === undefined) return false;
  }
  return true;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  return Object.getOwnPropertySymbols(v).length === 0;
}

function isPlainArray(v: unknown): v is unknown[] {
  return Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype;
}

/** Like `every`, but a hole counts as `undefined` (the schema reads every index; `every` skips holes). */
function everyItem(a: readonly unknown[], ok: (x: unknown) => boolean): boolean {
  for (let i = 0; i < a.length; i++) if (!ok(a[i])) return false;
  return true;
}
