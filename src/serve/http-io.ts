import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { RequestRefusedError } from '../core/errors.js';
import type { UpstreamResponse } from './upstream.js';
import type { UsageTap } from './usage-tap.js';

/** A body larger than the server accepts: answered 413. */
const tooLarge = (limit: number) =>
  new RequestRefusedError(413, `request body is larger than ${limit} bytes`);

// The request encodings a client may send; the body limit applies to what they decode to.
const DECODERS: Record<string, () => Transform> = {
  gzip: () => createGunzip(),
  'x-gzip': () => createGunzip(),
  deflate: () => createInflate(),
  br: () => createBrotliDecompress(),
};

/** The decoder of a request's `content-encoding` (none for identity); an unknown one is a 415. */
function decoderOf(req: IncomingMessage): Transform | undefined {
  const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return undefined;
  const make = DECODERS[encoding];
  if (make === undefined)
    throw new RequestRefusedError(
      415,
      `unsupported content-encoding "${encoding.slice(0, 40)}" (gzip, deflate, br or none)`,
    );
  return make();
}

/**
 * At most this much is set aside for a body before its bytes arrive (a client that declares
 * 32 MiB and sends nothing reserves no more; larger bodies go on in chunks).
 */
const SET_ASIDE_BYTES = 4 * 1024 * 1024;

/** Below this a body's buffer comes from the C allocator (glibc's own size for mapping a block apart). */
const OWN_PAGES_BYTES = 128 * 1024;

// Node 20 has resizable ArrayBuffers; the ES2022 library types do not declare their options.
const PagedArrayBuffer = ArrayBuffer as unknown as new (
  size: number,
  options: { maxByteLength: number },
) => ArrayBuffer;

/**
 * A buffer of `size` bytes for a body. A large one gets pages of its own, mapped by the engine
 * (a resizable ArrayBuffer), not the C allocator's, and given back to the system once the body
 * is collected. glibc serves a size it has freed before from its main heap, and gives back only
 * that heap's free end: the bodies of past requests, freed together at a collection, stayed
 * resident below whatever was allocated after them (about 70 MiB after 1,000 requests of 417 KB).
 */
function bodyBuffer(size: number): Buffer {
  if (size < OWN_PAGES_BYTES) return Buffer.allocUnsafe(size);
  return Buffer.from(new PagedArrayBuffer(size, { maxByteLength: size }), 0, size);
}

/** A body to send: a large text encoded into pages of its own (see {@link bodyBuffer}), a short one as it is. */
export function bodyToSend(text: string): Buffer | string {
  // A UTF-16 unit encodes to at most three bytes.
  if (3 * text.length < OWN_PAGES_BYTES) return text;
  const size = Buffer.byteLength(text);
  if (size < OWN_PAGES_BYTES) return text;
  const bytes = bodyBuffer(size);
  bytes.write(text);
  return bytes;
}

/**
 * The bytes of a body as they arrive, in one buffer of the size the client declared when it
 * declared one (each chunk is copied in and let go: no second copy of the whole body when it
 * ends, and the socket's read buffers are reused), else in chunks joined at the end.
 */
class Gathered {
  private whole: Buffer | undefined;
  private chunks: Buffer[] = [];
  size = 0;

  constructor(expected: number | undefined) {
    if (expected !== undefined && expected > 0) this.whole = bodyBuffer(Math.min(expected, SET_ASIDE_BYTES));
  }

  /** Keeps a chunk; returns the kept bytes (the chunk itself may be reused by its reader). */
  add(c: Buffer): Buffer {
    const at = this.size;
    this.size += c.length;
    const { whole } = this;
    if (whole !== undefined && this.size <= whole.length) {
      c.copy(whole, at);
      return whole.subarray(at, this.size);
    }
    if (whole !== undefined) {
      // More than was set aside: the rest is kept as chunks.
      this.chunks.push(whole.subarray(0, at));
      this.whole = undefined;
    }
    this.chunks.push(c);
    return c;
  }

  bytes(): Buffer {
    if (this.whole !== undefined) return this.whole.subarray(0, this.size);
    const out = bodyBuffer(this.size);
    let at = 0;
    for (const c of this.chunks) at += c.copy(out, at);
    return out;
  }
}

/**
 * Reads a request body whole, decoding gzip, deflate or br, up to `limit` bytes both as sent and
 * as decoded: the decoding stops at the limit, so a small body that inflates to gigabytes is a
 * 413 after `limit` bytes of work, not an exhausted memory. `sink` gets each piece of the
 * decoded body in order as it arrives (to parse it meanwhile); it must not throw.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  sink?: (piece: Buffer) => void,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return reject(tooLarge(limit));
    let decoder: Transform | undefined;
    try {
      decoder = decoderOf(req);
    } catch (e) {
      req.resume();
      return reject(e);
    }
    // Only an identity body is as long as it says; a decoded one's size is known at its end.
    const got = new Gathered(decoder === undefined && Number.isFinite(declared) ? declared : undefined);
    let sent = 0;
    let failed = false;
    const fail = (e: unknown) => {
      if (failed) return;
      failed = true;
      req.removeAllListeners('data');
      req.resume();
      decoder?.destroy();
      reject(e);
    };
    const take = (c: Buffer) => {
      if (got.size + c.length > limit) fail(tooLarge(limit));
      else {
        const kept = got.add(c);
        sink?.(kept);
      }
    };
    req.on('data', (c: Buffer) => {
      sent += c.length;
      if (sent > limit) fail(tooLarge(limit));
      else if (decoder) decoder.write(c);
      else take(c);
    });
    req.on('error', fail);
    // A client that hangs up mid-body ends the read (without this the request would wait forever).
    req.on('close', () => {
      if (!req.complete)
        fail(new RequestRefusedError(400, 'the client closed the request before its body ended'));
    });
    if (!decoder) {
      req.on('end', () => failed || resolve(got.bytes()));
      return;
    }
    const body = decoder;
    req.on('end', () => body.end());
    body.on('data', take);
    body.on('error', () =>
      fail(new RequestRefusedError(400, 'request body does not decode as its content-encoding says')),
    );
    body.on('end', () => failed || resolve(got.bytes()));
  });
}

/** Sends a whole JSON body. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * Passes the upstream's answer to the client as it arrives (a stream event by event), with
 * `extra` headers added, through `tap` when given. Resolves when the client has it all.
 */
export async function relayResponse(
  res: ServerResponse,
  upstream: UpstreamResponse,
  extra: Record<string, string>,
  tap?: UsageTap,
): Promise<void> {
  res.writeHead(upstream.status, { ...upstream.headers, ...extra });
  // Each event is written as it comes: no buffering between the upstream and the client.
  res.flushHeaders();
  await upstream.body.relayTo(res, tap);
}

/**
 * Sends an answer already read whole: its head and body in one write (one wake-up of the
 * client, not one for the head and one for the body). `tap` reads the same bytes for usage.
 */
export function relayWhole(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  body: Buffer,
  tap?: UsageTap,
): Promise<void> {
  if (tap) {
    tap.write(body);
    tap.end();
  }
  res.writeHead(status, { ...headers, 'content-length': String(body.length) });
  return new Promise((resolve) => {
    // A client gone meanwhile closes the answer without finishing it.
    res.once('close', resolve);
    res.end(body, resolve);
  });
}
