/**
 * o200k's pre-tokenizer on ASCII text, written out as a scan over character codes. The regex
 * (pieces.ts) finds the same pieces, but on source code and logs it cost about 100 ns a piece
 * and every piece became a string; this scan finds each piece's end from the classes of the
 * characters at its start, as the regex's alternatives and their backtracking decide it:
 *
 *   [^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?:'s|'t|'re|'ve|'m|'ll|'d)?     (any case in the suffix)
 *   [^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?:'s|'t|'re|'ve|'m|'ll|'d)?
 *   [0-9]{1,3}
 *    ?[^\sA-Za-z0-9]+[\r\n/]*
 *   \s*[\r\n]+
 *   \s+(?!\S)
 *   \s+
 *
 * Only for text of ASCII characters: `\s` here is the six ASCII white-space characters.
 */

// Character classes, one flag each, by ASCII code.
const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
/** White space: tab, line feed, vertical tab, form feed, carriage return, space. */
const SPACE = 8;
const NEWLINE = 16;
/** Neither a letter, a digit nor white space. */
const OTHER = 32;
/** What may trail a run of other characters: a line break or a slash. */
const TRAIL = 64;

const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (c >= 0x41 && c <= 0x5a) CLASS[c] = UPPER;
  else if (c >= 0x61 && c <= 0x7a) CLASS[c] = LOWER;
  else if (c >= 0x30 && c <= 0x39) CLASS[c] = DIGIT;
  else if (c === 0x0a || c === 0x0d) CLASS[c] = SPACE | NEWLINE;
  else if ((c >= 0x09 && c <= 0x0d) || c === 0x20) CLASS[c] = SPACE;
  else CLASS[c] = OTHER;
  if (c === 0x0a || c === 0x0d || c === 0x2f) CLASS[c] |= TRAIL;
}

/** The class of the character at `i`, 0 past `to`. */
const classAt = (text: string, i: number, to: number): number => (i < to ? CLASS[text.charCodeAt(i)]! : 0);

/** The end of the run of characters of class `kind` from `i`. */
function runEnd(text: string, i: number, to: number, kind: number): number {
  while (i < to && (CLASS[text.charCodeAt(i)]! & kind) !== 0) i++;
  return i;
}

/** The end of an English contraction suffix (`'s`, `'ll` …, any case) at `i`, or `i` when there is none. */
function contractionEnd(text: string, i: number, to: number): number {
  if (i + 1 >= to || text.charCodeAt(i) !== 0x27) return i;
  const a = text.charCodeAt(i + 1) | 0x20; // lower case of a letter
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return i + 2; // s t m d
  if (i + 2 >= to) return i;
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x72 || a === 0x76) && b === 0x65) return i + 3; // re ve
  if (a === 0x6c && b === 0x6c) return i + 3; // ll
  return i;
}

/** The end of the piece that starts at `i` (before `to`, which the pattern sees as the text's end). */
function pieceEnd(text: string, i: number, to: number): number {
  const c = CLASS[text.charCodeAt(i)]!;
  // The letter alternatives: an optional leading character that is not a letter, digit or line break.
  const lead = (c & (UPPER | LOWER | DIGIT | NEWLINE)) === 0 ? 1 : 0;
  const letters = i + lead;
  const first = classAt(text, letters, to);
  if ((first & (UPPER | LOWER)) !== 0) {
    const upperEnd = runEnd(text, letters, to, UPPER);
    // Upper case then lower case (the first alternative), else upper case alone (the second).
    const end = runEnd(text, upperEnd, to, LOWER);
    return contractionEnd(text, end, to);
  }
  if ((c & DIGIT) !== 0) return Math.min(runEnd(text, i, to, DIGIT), i + 3);
  const space = text.charCodeAt(i) === 0x20 ? 1 : 0;
  if ((classAt(text, i + space, to) & OTHER) !== 0)
    return runEnd(text, runEnd(text, i + space, to, OTHER), to, TRAIL);
  // White space from here on.
  const spaceEnd = runEnd(text, i, to, SPACE);
  let lastBreak = spaceEnd - 1;
  while (lastBreak >= i && (CLASS[text.charCodeAt(lastBreak)]! & NEWLINE) === 0) lastBreak--;
  if (lastBreak >= i) return lastBreak + 1;
  // Up to the last space before something else, so that space goes with it; all at the end.
  if (spaceEnd === to || spaceEnd - i === 1) return spaceEnd;
  return spaceEnd - 1;
}

/**
 * Calls `each` with the start and end of every piece of `text` from `from` to `to` (of ASCII
 * characters only), in order: the pieces o200k's pattern finds in `text.slice(from, to)`.
 */
export function eachAsciiPiece(
  text: string,
  from: number,
  to: number,
  each: (text: string, start: number, end: number) => void,
): void {
  for (let i = from; i < to;) {
    const end = pieceEnd(text, i, to);
    each(text, i, end);
    i = end;
  }
}
