/** What user-role text says: restrictions in the user's words, and sections of an earlier summary. */

const RESTRICTION =
  /\b(?:don't|do not|never|only|must|mustn't|must not|always|should not|shouldn't|avoid|without|make sure|no need to|not allowed|forbidden|prohibited)\b/i;

/** Sentences of a user message that state a restriction or preference. */
export function restrictionSentences(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/(?<=[.!?])\s+|\n+/)) {
    const s = raw.trim().replace(/^[-*#>\s]+/, '');
    if (s.length >= 6 && s.length <= 400 && RESTRICTION.test(s)) out.push(s);
  }
  return out;
}

// Lines of a summary that carry nothing forward: placeholders and omission notes.
const EMPTY_LINE = /^-\s*(?:\(none\)|… \d+ more omitted\b.*)$/;

/** Sections of a Compactor summary message, by heading (placeholders and omission notes left out). */
export function parseSummarySections(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const h = /^##\s+(.+?)\s*$/.exec(line);
    if (h) {
      current = [];
      out.set(h[1], current);
    } else if (current && line.trim() !== '' && !EMPTY_LINE.test(line.trim())) current.push(line);
  }
  return out;
}
