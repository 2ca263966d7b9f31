import { closeSync, openSync, readSync } from 'node:fs';
import { firstByte, ESCAPE_MIN_BYTES } from './json-escape.js';
import { JsonDocument } from './json-text.js';
import { checkSessionFile, MAX_SESSION_FILE_BYTES } from './read-file.js';
import { linkAssembledRawNumbers, rememberRawNumbers } from './raw-numbers.js';
import { UserError } from '../core/errors.js';

/**
 * Parses a large JSON document from byte chunks without ever holding its whole text
 * (memory: a 224 MB transcript held as a buffer, a string and the parsed values at once peaked
 * over 700 MB). The scanner only finds where the entries of the document's long lists begin
 * and end: the elements of a top-level array, or of the arrays that are members of a top-level
 * object (`messages`, `input`, `history` …). Each entry is parsed on its own by JSON.parse, and
 * what is left around them (the skeleton, with a `[n]` in place of entry n) is parsed last.
 * JSON.parse does all the parsing, so values, duplicate keys, escapes and raw number texts are
 * exactly those of parsing the whole text: a value stands where a value stood, so the whole is
 * valid exactly when every piece and the skeleton are. Anything wrong throws; the caller then
 * reads the file whole to report the error as before.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Finds where strings end in one chunk with indexOf (most of a transcript's bytes are inside
 * strings; a byte-by-byte loop was the scan's main cost). The next quote and backslash are
 * remembered until passed, so every byte is searched once.
 */
class StringSkipper {
  private quote = -1;
  private backslash = -1;
  constructor(private readonly chunk: Buffer) {}

  /** Index of the closing quote of a string at `i` (inside it), chunk length when none, or length + 1 when the chunk ends on a backslash. */
  toStringEnd(i: number): number {
    const len = this.chunk.length;
    for (;;) {
      if (this.quote < i) this.quote = this.find(QUOTE, i);
      if (this.backslash < i) this.backslash = this.find(BACKSLASH, i);
      if (this.backslash >= this.quote) return this.quote;
      i = this.backslash + 2; // skip the escaped byte
      if (i > len) return len + 1;
      if (i === len) return len;
    }
  }

  private find(byte: number, from: number): number {
    const at = this.chunk.indexOf(byte, from);
    return at < 0 ? this.chunk.length : at;
  }
}

/**
 * Bytes appended into one growing buffer: the skeleton is two small pieces per entry, and a
 * Buffer object for each (200,000 for a long session) took 17 MB of heap.
 */
class GrowingBytes {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private size = 0;

  append(bytes: Uint8Array): void {
    if (this.size + bytes.length > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.size + bytes.length));
      this.buf.copy(bigger, 0, 0, this.size);
      this.buf = bigger;
    }
    this.buf.set(bytes, this.size);
    this.size += bytes.length;
  }

  appendAscii(text: string): void {
    this.append(Buffer.from(text, 'latin1'));
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.size);
  }
}

export class JsonPieces {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private readonly skeleton = new GrowingBytes();
  /** Parts of the entry being read when it spans chunks. */
  private entryParts: Buffer[] = [];
  private readonly entries: unknown[] = [];
  /** Some piece holds a raw number text (then the whole document gets lossless twins). */
  private rawNumbers = false;
  private depth = 0;
  private top = 0;
  /** The open container at depth 2 (inside a top-level object) is an array. */
  private innerArray = false;
  private inString = false;
  private escaped = false;
  /** Depth at which the entry being read started, or -1 outside entries. */
  private entryDepth = -1;
  /** The top-level value has closed: another one means JSON Lines, not one document. */
  private closed = false;

  /** Scans one chunk (the caller may reuse its buffer afterwards). */
  write(chunk: Buffer): void {
    const len = chunk.length;
    const skip = new StringSkipper(chunk);
    let start = 0;
    let { depth, inString, entryDepth } = this;
    let i = 0;
    if (this.escaped) i = 1;
    this.escaped = false;
    while (i < len) {
      if (inString) {
        i = skip.toStringEnd(i);
        if (i > len) this.escaped = true; // the chunk ends inside an escape
        if (i >= len) break;
        inString = false;
        i++;
        continue;
      }
      const b = chunk[i]!;
      if (b === QUOTE) inString = true;
      else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
        // Stop at once rather than scan (and parse entries of) a whole JSON Lines file.
        if (depth === 0 && this.closed) throw new UserError('more than one JSON value');
        if (entryDepth < 0 && this.startsEntry(depth)) {
          this.skeleton.append(chunk.subarray(start, i));
          start = i;
          entryDepth = depth;
        } else if (depth === 0) this.top = b;
        else if (depth === 1) this.innerArray = b === OPEN_ARRAY;
        depth++;
      } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
        depth--;
        if (depth < 0) throw new UserError('unbalanced JSON');
        if (depth === 0) this.closed = true;
        if (depth === entryDepth) {
          this.endEntry(chunk.subarray(start, i + 1));
          start = i + 1;
          entryDepth = -1;
        }
      }
      i++;
    }
    if (entryDepth >= 0) this.entryParts.push(Buffer.from(chunk.subarray(start)));
    else this.skeleton.append(chunk.subarray(start));
    this.depth = depth;
    this.inString = inString;
    this.entryDepth = entryDepth;
  }

  /** The whole document; throws when it is not one complete JSON value. */
  end(): unknown {
    if (this.depth !== 0 || this.inString || this.entryDepth >= 0) throw new UserError('truncated JSON');
    const text = this.decoder.decode(this.skeleton.bytes());
    const doc: unknown = JSON.parse(text);
    if (rememberRawNumbers(text, doc)) this.rawNumbers = true;
    this.fill(doc);
    if (this.rawNumbers) linkAssembledRawNumbers(doc);
    return doc;
  }

  /** Entries are the containers directly inside a top-level array or a top-level object's arrays. */
  private startsEntry(depth: number): boolean {
    return (
      (depth === 1 && this.top === OPEN_ARRAY) || (depth === 2 && this.top === OPEN_OBJECT && this.innerArray)
    );
  }

  private endEntry(last: Buffer): void {
    const bytes = this.entryParts.length === 0 ? last : Buffer.concat([...this.entryParts, last]);
    this.entryParts = [];
    const text = this.decoder.decode(bytes);
    const value: unknown = JSON.parse(text);
    if (rememberRawNumbers(text, value)) this.rawNumbers = true; // exact number texts, per entry
    this.skeleton.appendAscii(`[${this.entries.length}]`);
    this.entries.push(value);
  }

  /** Puts each entry back where its `[n]` stands (every array in an entry's place is one). */
  private fill(doc: unknown): void {
    const fillArray = (a: unknown[]): void => {
      for (let k = 0; k < a.length; k++) {
        const v = a[k];
        if (Array.isArray(v)) a[k] = this.entries[v[0] as number];
      }
    };
    if (Array.isArray(doc)) fillArray(doc);
    else if (typeof doc === 'object' && doc !== null)
      for (const v of Object.values(doc)) if (Array.isArray(v)) fillArray(v);
    this.entries.length = 0;
  }
}

/** JSON files from this size on are read in pieces (smaller ones are read whole, as text). */
export const PIECES_MIN_BYTES = ESCAPE_MIN_BYTES;

// Bytes read at a time: large enough that most entries fit in one read, small next to the file.
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The parsed document of a large JSON session file, read a chunk at a time so its whole text
 * is never in memory (see {@link JsonPieces}). The file checks (regular file, size cap) come
 * first and throw as for every read. Undefined when the file is under `minBytes`, does not
 * start like a JSON document, or is not one valid document of UTF-8 text without NUL bytes:
 * the caller then reads it whole, which reports any problem exactly as before (file, entry, field).
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
