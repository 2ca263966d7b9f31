import { setImmediate as nextTurn } from 'node:timers/promises';
import { JsonPieces } from '../formats/json-pieces.js';
import { MAX_JSON_DEPTH, scanDepth } from './request-guards.js';

/**
 * A large request body read a slice at a time, with other requests served between the slices:
 * parsed in one go, a body of 10 MB held every other client for as long as its parse took.
 * The depth check and the parse (each long list's entries parsed on their own as their bytes
 * go by) both stop at each slice's end and go on after the event loop has had its turn.
 */

/** Bodies from this size on are read in slices. */
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
