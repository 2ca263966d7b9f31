/**
 * The one way text is cut short for people and providers. Every cut is surrogate-safe: a cut
 * between the halves of a surrogate pair (emoji, rare CJK) would leave a lone surrogate, and
 * providers reject such a request body as invalid JSON/UTF-8.
 */

/** True when a cut at index `i` falls between the two halves of a surrogate pair. */
export function splitsSurrogatePair(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return false;
  const low = text.charCodeAt(i);
  const high = text.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
}

/** The first `units` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
export function headUnits(text: string, units: number): string {
  return text.slice(0, splitsSurrogatePair(text, units) ? units - 1 : units);
}

/** `text` from index `start` on, one unit later when the cut would split a surrogate pair. */
export function tailFrom(text: string, start: number): string {
  return text.slice(splitsSurrogatePair(text, start) ? start + 1 : start);
}

/** `text` when it has at most `max` units; otherwise its head and `…`, `max` units at most in all. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${headUnits(text, max - 1)}…` : text;
}

/** Whitespace runs collapsed to one space, trimmed, then clipped to `max` (no multi-KB bodies in errors). */
export function oneLine(text: string, max = 400): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}

/**
 * The index of the quote that closes the JSON string opened at `open` (the text's length when
 * none does). Found with `indexOf`, which scans far faster than a loop over every character: a
 * request body is mostly long strings.
 */
export function jsonStringEnd(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    // Escaped when an odd number of backslashes stands before it.
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return at;
  }
}
