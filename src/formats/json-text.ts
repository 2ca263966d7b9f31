import { clip } from '../core/text.js';
import { inputError, placeOf } from './input-error.js';
import { rememberRawNumbers } from './raw-numbers.js';

/** A JSON document already parsed: a large file read in pieces (see json-pieces.ts). */
export class JsonDocument {
  constructor(readonly value: unknown) {}
}

/** Session text, or a large JSON document already parsed from its file. */
export type SessionText = string | JsonDocument;

/** True when the text is a JSON array (its first non-blank character is `[`). */
export function isJsonArrayText(text: SessionText): boolean {
  return typeof text === 'string' ? text.trimStart().startsWith('[') : Array.isArray(text.value);
}

/** One parsed line of a JSON Lines file, with its 1-based line number. */
export interface JsonLine {
  line: number;
  value: unknown;
}

// Within {@link reusingParses} the last successful parse is remembered: detection parses a
// document to see its shape, then the importer parsed it again (twice the time and the
// garbage of a 200 MB file). The value is shared; detection only reads it.
let memo: { text: string; value: unknown } | null = null;
let memoOn = false;

/** Runs `work` with repeated parses of the same text answered from the first (one at a time). */
export function reusingParses<T>(work: () => T): T {
  memoOn = true;
  try {
    return work();
  } finally {
    memoOn = false;
    memo = null;
  }
}

function parseRemembered(text: string): unknown {
  if (memo !== null && memo.text === text) return memo.value;
  const value: unknown = JSON.parse(text);
  rememberRawNumbers(text, value); // exact number texts for round trips
  if (memoOn) memo = { text, value };
  return value;
}

/** Parses a whole-file JSON document; syntax errors name the file and the line and column. */
export function parseJson(text: SessionText, fileName?: string): unknown {
  if (text instanceof JsonDocument) return text.value;
  try {
    return parseRemembered(text);
  } catch (e) {
    throw inputError(placeOf(fileName), `malformed JSON (${describeSyntaxError(e as Error, text)})`);
  }
}

/** Parses JSON or returns undefined (used where a failure means "try JSON Lines next"). */
export function tryParseJson(text: SessionText): unknown {
  if (text instanceof JsonDocument) return text.value;
  try {
    return parseRemembered(text);
  } catch {
    return undefined;
  }
}

/** Parses JSON Lines, skipping blank lines; a bad line fails with its line number. */
export function parseJsonLines(text: SessionText, fileName?: string): JsonLine[] {
  // Only a file whose document has a known shape is read in pieces (readSessionFile).
  if (text instanceof JsonDocument)
    throw inputError(placeOf(fileName), 'expected JSON Lines, found one JSON document');
  const out: JsonLine[] = [];
  let start = 0;
  let line = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    line++;
    const raw = text.slice(start, end).trim();
    if (raw !== '') {
      try {
        const value: unknown = JSON.parse(raw);
        rememberRawNumbers(raw, value);
        out.push({ line, value });
      } catch (e) {
        const last = text.slice(end + 1).trim() === '';
        const what = last ? 'truncated or malformed JSON' : 'malformed JSON';
        throw inputError(
          placeOf(fileName, `line ${line}`),
          `${what} (${describeSyntaxError(e as Error, raw)})`,
        );
      }
    }
    start = end + 1;
  }
  return out;
}

/** The first `n` non-blank lines, trimmed. */
export function firstLines(text: string, n: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (out.length < n && start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const l = text.slice(start, end).trim();
    if (l !== '') out.push(l);
    start = end + 1;
  }
  return out;
}

// V8 says "Unexpected token } in JSON at position 12" or "... (line 3 column 5)"; turn a
// position into line:column so the message points at the spot, and keep it short.
function describeSyntaxError(e: Error, text: string): string {
  const msg = e.message.replace(/\s+/g, ' ');
  const m = /position (\d+)/.exec(msg);
  if (m && !/line \d+ column/.test(msg)) {
    const pos = Number(m[1]);
    const before = text.slice(0, pos);
    const line = before.split('\n').length;
    const col = pos - before.lastIndexOf('\n');
    return `${msg.replace(/ in JSON at position \d+.*$/, '')} at line ${line} column ${col}`;
  }
  return clip(msg, 160);
}
