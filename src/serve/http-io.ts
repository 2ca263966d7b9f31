import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RequestRefusedError } from '../core/errors.js';
import type { UpstreamResponse } from './upstream.js';

/** A body larger than the server accepts: answered 413. */
const tooLarge = (limit: number) =>
  new RequestRefusedError(413, `request body is larger than ${limit} bytes`);

/** Reads a request body whole, up to `limit` bytes (beyond it the read stops with a 413 refusal). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return reject(tooLarge(limit));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    // A client that hangs up mid-body ends the read (without this the request would wait forever).
    req.on('close', () => {
      if (!req.complete)
        reject(new RequestRefusedError(400, 'the client closed the request before its body ended'));
    });
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
  tap?: Transform,
): Promise<void> {
  res.writeHead(upstream.status, { ...upstream.headers, ...extra });
  // Each event is written as it comes: no buffering between the upstream and the client.
  res.flushHeaders();
  if (tap) await pipeline(upstream.body, tap, res);
  else await pipeline(upstream.body, res);
}
