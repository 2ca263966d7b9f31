import type { IncomingMessage } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { JsonPieces } from '../formats/json-pieces.js';
import { checkJsonDepth, MAX_JSON_DEPTH, scanDepth } from './request-guards.js';

/**
 * A large request body read a slice at a time, with other requests served between the slices:
 * parsed in one go, a body of 10 MB held every other client for as long as its parse took.
 * The depth check and the parse (each long list's entries parsed on their own as their bytes
 * go by) both stop at each slice's end and go on after the event loop has had its turn.
 */

/**
 * Bodies from this size on are parsed in pieces: as their bytes arrive, or a slice at a time.
 * Smaller ones are parsed whole: for an 850 KB body the pieces cost about a fifth more CPU than
 * one JSON.parse of the text the proxy decodes anyway.
 */
export const SLICED_BODY_BYTES = 1024 * 1024;

/** Bytes (or characters) handled between two turns of the event loop. */
const SLICE = 256 * 1024;

/** Refuses JSON nested deeper than `max`, a slice of the text at a time (see checkJsonDepth). */
export async function checkJsonDepthInSlices(text: string, max = MAX_JSON_DEPTH): Promise<void> {
  let at = 0;
  let depth = 0;
  while (at < text.length) {
    [at, depth] = scanDepth(text, at, Math.min(text.length, at + SLICE), depth, max);
    await nextTurn();
  }
}

/**
 * The parsed body, a slice at a time; undefined when it is not one valid JSON document (the
 * caller then parses the text whole, which reports the problem with its place).
 */
export async function parsedInSlices(body: Buffer): Promise<unknown> {
  const pieces = new JsonPieces();
  try {
    for (let off = 0; off < body.length; off += SLICE) {
      pieces.write(body.subarray(off, off + SLICE));
      await nextTurn();
    }
    return pieces.end();
  } catch {
    return undefined;
  }
}

/**
 * A body parsed while its bytes arrive, each chunk as it comes: the parse costs no stretch of
 * its own once the body has ended. Any problem (not JSON, not UTF-8, more than one value) only
 * marks it failed: the caller then parses the text whole, which reports the problem.
 */
export class ParseAsItArrives {
  private pieces: JsonPieces | undefined = new JsonPieces();
  /** Whether the body was let go at its first chunk, to be read another way (it may resend a kept one). */
  dropped = false;

  /** `letGo` tells from the first chunk whether the body is likely read without parsing it whole. */
  constructor(private letGo?: (start: Buffer) => boolean) {}

  /** Parses one more chunk of the body (its bytes are not kept). */
  write = (chunk: Buffer): void => {
    if (this.letGo?.(chunk) === true) {
      this.dropped = true;
      this.pieces = undefined;
    }
    this.letGo = undefined;
    try {
      this.pieces?.write(chunk);
    } catch {
      this.pieces = undefined;
    }
  };

  /** The parsed body, or undefined when it is not one valid JSON document. */
  end(): unknown {
    try {
      return this.pieces?.end();
    } catch {
      return undefined;
    } finally {
      this.pieces = undefined;
    }
  }
}

/**
 * The parse of a request's body as it arrives, for a body declared large; else none. A body whose
 * start `letGo` says is likely read from a kept body is not parsed meanwhile: that parse would
 * cost the whole body's CPU for nothing.
 */
export function parseAsItArrives(
  req: IncomingMessage,
  letGo?: (start: Buffer) => boolean,
): ParseAsItArrives | undefined {
  const declared = Number(req.headers['content-length']);
  return declared >= SLICED_BODY_BYTES ? new ParseAsItArrives(letGo) : undefined;
}

/**
 * Checks a body's depth and, for a large one, parses it (as it arrived or a slice at a time,
 * the event loop turning between slices): the parsed body, or undefined when the caller is to
 * parse the text whole.
 */
export async function checkedBody(
  text: string,
  bytes: Buffer,
  arriving: ParseAsItArrives | undefined,
): Promise<unknown> {
  const large = bytes.length >= SLICED_BODY_BYTES;
  if (!large) checkJsonDepth(text);
  else await checkJsonDepthInSlices(text);
  if (arriving !== undefined && !arriving.dropped) return arriving.end();
  return large ? parsedInSlices(bytes) : undefined;
}
