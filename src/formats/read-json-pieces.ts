import { closeSync, openSync, readSync } from 'node:fs';
import { firstByte, ESCAPE_MIN_BYTES } from './json-escape.js';
import { JsonPieces } from './json-pieces.js';
import { JsonDocument } from './json-text.js';
import { checkSessionFile, MAX_SESSION_FILE_BYTES } from './read-file.js';

/** JSON files from this size on are read in pieces (smaller ones are read whole, as text). */
export const PIECES_MIN_BYTES = ESCAPE_MIN_BYTES;

// Bytes read at a time: large enough that most entries fit in one read, small next to the file.
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The parsed document of a large JSON session file, read a chunk at a time so its whole text
 * is never in memory (see {@link JsonPieces}). The file checks (regular file, size cap) come
 * first and throw as for every read. Undefined when the file is under `minBytes`, does not
 * start like a JSON document, or is not one valid document of UTF-8 text without NUL bytes:
 * the caller then reads it whole, which reports any problem exactly as before.
 */
export function readJsonDocumentInPieces(
  path: string,
  name: string,
  minBytes = PIECES_MIN_BYTES,
  maxBytes = MAX_SESSION_FILE_BYTES,
): JsonDocument | undefined {
  const size = checkSessionFile(path, maxBytes, name);
  if (size < minBytes || size === 0) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const chunk = Buffer.allocUnsafe(Math.min(size, CHUNK_BYTES));
    const pieces = new JsonPieces();
    for (let off = 0; ;) {
      const n = readSync(fd, chunk, 0, chunk.length, off);
      if (n === 0) break;
      const part = chunk.subarray(0, n);
      if (part.includes(0)) return undefined;
      if (off === 0 && !isDocumentStart(firstByte(part))) return undefined;
      pieces.write(part);
      off += n;
    }
    return new JsonDocument(pieces.end());
  } catch {
    return undefined; // read whole again: the usual path names the file and the problem
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const isDocumentStart = (b: number | undefined): boolean => b === 0x7b || b === 0x5b;
