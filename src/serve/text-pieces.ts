/**
 * A body's text held as the pieces it was read in: the kept start of the session's last body and
 * each new part after it. Joined with `+` they make one string that is never copied whole until
 * something reads across it; slicing that string would copy all of it first (on every request,
 * as long as the body). Slices taken from the pieces cost only what they cover. Pieces are cut
 * between characters, never inside a surrogate pair (a body's where its list's items end), so
 * their UTF-8 lengths add up.
 */
export type TextPieces = readonly string[];

/** How many pieces a text may be held in before they are joined into one (a copy every so many requests). */
const MAX_PIECES = 16;

/** The one string the pieces make, not copied until something reads it. */
export function joinedText(pieces: TextPieces): string {
  let text = '';
  for (const piece of pieces) text += piece;
  return text;
}

/** The pieces of the text between two offsets (`end` at most the text's length). */
export function piecesBetween(pieces: TextPieces, start: number, end: number): string[] {
  const out: string[] = [];
  let at = 0;
  for (const piece of pieces) {
    const next = at + piece.length;
    if (next > start && at < end)
      out.push(start <= at && next <= end ? piece : piece.slice(Math.max(start - at, 0), end - at));
    at = next;
    if (at >= end) break;
  }
  return out;
}

/** The code unit at `index` of the text the pieces make. */
export function charCodeIn(pieces: TextPieces, index: number): number {
  let at = 0;
  for (const piece of pieces) {
    if (index < at + piece.length) return piece.charCodeAt(index - at);
    at += piece.length;
  }
  return NaN;
}

/** The pieces with `more` added, joined into one once there are many (so reading them stays cheap). */
export function withPiece(pieces: TextPieces, more: string): string[] {
  const out = more === '' ? [...pieces] : [...pieces, more];
  return out.length > MAX_PIECES ? [out.join('')] : out;
}
