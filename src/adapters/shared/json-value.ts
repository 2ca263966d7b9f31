import type { Json } from '../../messages/message.js';

/**
 * Framework parts carry values JSON cannot hold (bytes, `URL` objects). Canonical messages
 * keep opaque parts as JSON, so these values are tagged on the way in and restored on the
 * way out; everything else passes through unchanged, which keeps the round trip lossless.
 */

const BYTES = '__compactor_bytes';
const URL_TAG = '__compactor_url';

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** `value` as JSON: bytes and URLs tagged, `undefined` fields dropped. */
export function encodeJson(value: unknown): Json {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof Uint8Array) return { [BYTES]: toBase64(value) };
  if (value instanceof ArrayBuffer) return { [BYTES]: toBase64(new Uint8Array(value)) };
  if (value instanceof URL) return { [URL_TAG]: value.href };
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : encodeJson(v)));
  if (typeof value === 'object') {
    // Made from entries, not by assignment: an own `__proto__` key (JSON can hold one) stays a
    // key instead of setting the copy's prototype.
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return Object.fromEntries(entries.map(([k, v]) => [k, encodeJson(v)])) as { [key: string]: Json };
  }
  return null;
}

/** The inverse of {@link encodeJson}: tagged bytes become a `Uint8Array`, tagged URLs a `URL`. */
export function decodeJson(json: Json): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map(decodeJson);
  const keys = Object.keys(json);
  if (keys.length === 1 && keys[0] === BYTES && typeof json[BYTES] === 'string')
    return new Uint8Array(Buffer.from(json[BYTES], 'base64'));
  if (keys.length === 1 && keys[0] === URL_TAG && typeof json[URL_TAG] === 'string')
    return new URL(json[URL_TAG]);
  return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, decodeJson(v)]));
}

/** A JSON string for tool-call input (`''` for undefined, so it decodes back to undefined). */
export function inputToArguments(input: unknown): string {
  return input === undefined ? '' : JSON.stringify(encodeJson(input));
}

/** Tool-call arguments back to the framework's input: parsed JSON, else the raw string. */
export function argumentsToInput(args: string): unknown {
  if (args === '') return undefined;
  try {
    return decodeJson(JSON.parse(args) as Json);
  } catch {
    return args;
  }
}

/** Key-order-insensitive JSON equality (zod may reorder keys of parsed copies). */
export function sameJson(a: unknown, b: unknown): boolean {
  return stable(a) === stable(b);
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}
