import type { IncomingMessage } from 'node:http';

/**
 * The bytes of a body the proxy sends upstream, taken from the client's own bytes wherever the
 * body's text is the client's text. Encoding a whole body again costs as much as decoding it;
 * a body that differs from the client's in one place (the recall tool added, an output limit
 * lowered, a few items cleared) is sent as the client's bytes before and after that place, and
 * only what lies between is encoded.
 */

/** A client's body as read: its decoded bytes and their text. */
interface ClientBody {
  text: string;
  bytes: Buffer;
  /** Whether each character of the text stands for as many bytes as it encodes to (known once asked). */
  aligned?: boolean;
}

const bodies = new WeakMap<IncomingMessage, ClientBody>();

/** Remembers the body a request came with, for the bodies sent upstream on its behalf. */
export function rememberClientBody(req: IncomingMessage, text: string, bytes: Buffer): void {
  bodies.set(req, { text, bytes });
}

/** Characters compared at a time while looking for where two texts part. */
const CHUNK = 4_096;

/** How many leading characters `a` and `b` share. */
function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let n = 0;
  // Whole chunks first (compared natively), then character by character inside the first that differs.
  while (n + CHUNK <= max && a.slice(n, n + CHUNK) === b.slice(n, n + CHUNK)) n += CHUNK;
  while (n < max && a.charCodeAt(n) === b.charCodeAt(n)) n++;
  return n;
}

/** How many trailing characters `a` and `b` share, leaving at least `keep` leading ones of each. */
function commonSuffix(a: string, b: string, keep: number): number {
  const max = Math.min(a.length, b.length) - keep;
  let n = 0;
  while (
    n + CHUNK <= max &&
    a.slice(a.length - n - CHUNK, a.length - n) === b.slice(b.length - n - CHUNK, b.length - n)
  )
    n += CHUNK;
  while (n < max && a.charCodeAt(a.length - 1 - n) === b.charCodeAt(b.length - 1 - n)) n++;
  return n;
}

/**
 * What to send for `body` on behalf of `req`: the client's bytes when it is the client's text,
 * else the client's bytes around the part that differs with only that part encoded, else the
 * text (for undici to encode) when the request has no body remembered or its bytes do not map
 * one to one onto its text (they were not valid UTF-8).
 */
export function upstreamBytes(req: IncomingMessage, body: string): Buffer | Buffer[] | string {
  const client = bodies.get(req);
  if (client === undefined) return body;
  const { text, bytes } = client;
  client.aligned ??= Buffer.byteLength(text) === bytes.length;
  if (!client.aligned) return body;
  if (body === text) return bytes;
  const head = commonPrefix(text, body);
  // A surrogate pair is one character of UTF-8: a part that differs never starts inside one.
  const start = head > 0 && isHighSurrogate(text.charCodeAt(head - 1)) ? head - 1 : head;
  let tail = commonSuffix(text, body, start);
  if (tail > 0 && isLowSurrogate(text.charCodeAt(text.length - tail))) tail--;
  // Too little in common to be worth the pieces: the body is encoded whole.
  if (start + tail < body.length / 2) return body;
  const headBytes = Buffer.byteLength(text.slice(0, start));
  const tailBytes = Buffer.byteLength(text.slice(text.length - tail));
  return [
    bytes.subarray(0, headBytes),
    Buffer.from(body.slice(start, body.length - tail)),
    bytes.subarray(bytes.length - tailBytes),
  ];
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
