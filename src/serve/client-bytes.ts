import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { bodyToSend } from './http-io.js';
import { charCodeIn, joinedText, piecesBetween, type TextPieces } from './text-pieces.js';

/**
 * The bytes of a body the proxy sends upstream, taken from the client's own bytes where the
 * body is the client's text: encoding a whole body again costs as much as decoding it. The
 * client's text with something added in one place (the recall tool after its tools) goes as
 * the client's bytes before and after that place, with only what was added encoded.
 */

/** A client's body as read: its decoded bytes and their text, and the one text made from it by an insertion. */
interface ClientBody {
  text: string;
  bytes: Buffer;
  /** The text in the pieces it was read in: an insertion is made from them, the text itself not read. */
  pieces?: TextPieces;
  /** Whether each character of the text stands for as many bytes as it encodes to (known once asked). */
  aligned?: boolean;
  inserted?: { text: string; pieces: Buffer[] };
}

const bodies = new WeakMap<IncomingMessage, ClientBody>();

/**
 * Remembers the body a request came with, for the bodies sent upstream on its behalf; `read`
 * gives the pieces its text was read in, and whether its bytes are known to be valid UTF-8.
 */
export function rememberClientBody(
  req: IncomingMessage,
  text: string,
  bytes: Buffer,
  read?: { pieces: TextPieces; aligned: boolean },
): void {
  bodies.set(req, { text, bytes, ...read });
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * Whether a body's bytes map one to one onto its text (they were valid UTF-8, or near enough).
 * Valid UTF-8 is checked first: far cheaper than measuring the text's UTF-8 length again.
 */
function aligned(client: ClientBody): boolean {
  client.aligned ??= isUtf8(client.bytes) || Buffer.byteLength(client.text) === client.bytes.length;
  return client.aligned;
}

/**
 * The client's text of `req` with `insert` added before character `at`; its bytes are
 * remembered as the client's around the insertion, so sending it encodes only `insert`.
 */
export function clientTextWith(req: IncomingMessage, text: string, at: number, insert: string): string {
  const client = bodies.get(req);
  const pieces = (client?.text === text ? client.pieces : undefined) ?? [text];
  const before = piecesBetween(pieces, 0, at);
  const after = piecesBetween(pieces, at, text.length);
  const out = joinedText([...before, insert, ...after]);
  // The place must fall between two characters of UTF-8, not inside a surrogate pair.
  if (client?.text !== text || !aligned(client) || (at > 0 && isHighSurrogate(charCodeIn(pieces, at - 1))))
    return out;
  const { bytes } = client;
  // As many bytes as characters: each is one. Else counted from the nearer end: the tools are
  // most often at one end of a request.
  const byteAt =
    bytes.length === text.length
      ? at
      : at <= text.length / 2
        ? byteLengthOf(before)
        : bytes.length - byteLengthOf(after);
  client.inserted = {
    text: out,
    pieces: [bytes.subarray(0, byteAt), Buffer.from(insert), bytes.subarray(byteAt)],
  };
  return out;
}

const byteLengthOf = (pieces: TextPieces) => pieces.reduce((n, piece) => n + Buffer.byteLength(piece), 0);

/**
 * What to send for `body` on behalf of `req`: the client's bytes when it is the client's text,
 * the client's bytes around the insertion when it is the text {@link clientTextWith} made,
 * else the text (a large one encoded here into pages of its own, see http-io.ts). The same
 * string objects are compared: no text is read.
 */
export function upstreamBytes(req: IncomingMessage, body: string): Buffer | Buffer[] | string {
  const client = bodies.get(req);
  if (client === undefined) return bodyToSend(body);
  if (body === client.text && aligned(client)) return client.bytes;
  if (body === client.inserted?.text) return client.inserted.pieces;
  return bodyToSend(body);
}
