/**
 * Adds one element at the end of an array member of a JSON object's top level, in the text
 * itself: every other byte stays as the client wrote it (a rewritten body would change its
 * formatting and key order, and with them what a byte-for-byte client or cache sees).
 */

const QUOTE = 0x22;

/** Whether a character code is space between the tokens of a JSON text (only these four are). */
export const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Index just past the string starting at `i` (a quote); found with indexOf, as most of a body is strings. */
export function stringEnd(text: string, i: number): number {
  for (let j = i + 1; ;) {
    const q = text.indexOf('"', j);
    if (q < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Index of the bracket closing the array or object opened at `i`, or -1. */
function closingOf(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      j = stringEnd(text, j) - 1;
      if (j < 0) return -1;
    } else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) if (--depth === 0) return j;
  }
  return -1;
}

const skipSpace = (text: string, i: number) => {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
};

/** Index of the last character of a scalar value starting at `i` (string, number, literal). */
function valueEnd(text: string, i: number): number {
  if (text.charCodeAt(i) === QUOTE) {
    const end = stringEnd(text, i);
    return end < 0 ? -1 : end - 1;
  }
  let j = i;
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (isSpace(c) || c === 0x2c || c === 0x7d || c === 0x5d) break;
  }
  return j > i ? j - 1 : -1;
}

/** Where a top-level array member of a JSON object's text lies: its brackets and each element's span. */
export interface ArrayAt {
  /** Index of the `[`. */
  open: number;
  /** Index of the `]`. */
  close: number;
  /** Each element's `[start, end)` in the text. */
  items: Array<[number, number]>;
}

/** The spans of the elements of the array under `key` at the top level of the object `text` holds. */
export function topLevelArrayAt(text: string, key: string): ArrayAt | undefined {
  const value = memberValueAt(text, key);
  if (value === undefined || text[value] !== '[') return undefined;
  const i = skipSpace(text, value + 1);
  if (text[i] === ']') return { open: value, close: i, items: [] };
  const rest = arrayItemsFrom(text, i, true);
  return rest === undefined ? undefined : { open: value, ...rest };
}

/** Where the array under `key` at the top level of the object `text` holds closes (its `]`), or -1 when it is absent or empty. */
export function filledArrayClose(text: string, key: string): number {
  const at = topLevelArrayAt(text, key);
  return at === undefined || at.items.length === 0 ? -1 : at.close;
}

/**
 * The elements of an array from `i` on, up to its `]`: at an element when `atItem`, else just
 * after one (where a `,` or the `]` comes next). Undefined when the text is not an array's rest there.
 */
export function arrayItemsFrom(
  text: string,
  i: number,
  atItem: boolean,
): { close: number; items: Array<[number, number]> } | undefined {
  const items: Array<[number, number]> = [];
  if (!atItem) {
    i = skipSpace(text, i);
    if (text[i] === ']') return { close: i, items };
    if (text[i] !== ',') return undefined;
    i = skipSpace(text, i + 1);
  }
  while (i < text.length) {
    const end = text[i] === '[' || text[i] === '{' ? closingOf(text, i) : valueEnd(text, i);
    if (end < 0) return undefined;
    items.push([i, end + 1]);
    i = skipSpace(text, end + 1);
    if (text[i] === ']') return { close: i, items };
    if (text[i] !== ',') return undefined;
    i = skipSpace(text, i + 1);
  }
  return undefined;
}

/** How many top-level members of the object `text` holds are named `key` (undefined when it cannot tell). */
export function topLevelKeyCount(text: string, key: string): number | undefined {
  const want = JSON.stringify(key);
  const members = topLevelMembers(text);
  let count = 0;
  for (let m = members.next(); ; m = members.next()) {
    if (m.done === true) return m.value ? count : undefined;
    if (isNamed(m.value.name, key, want)) count++;
  }
}

/**
 * The top-level members of the object `text` holds, in order: each name as written (quotes
 * included) and where its value begins. Returns false once the text is not such an object.
 */
function* topLevelMembers(text: string): Generator<{ name: string; value: number }, boolean> {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return false;
  for (i = skipSpace(text, i + 1); i < text.length && text[i] === '"';) {
    const end = stringEnd(text, i);
    if (end < 0) return false;
    const value = skipSpace(text, skipSpace(text, end) + 1);
    yield { name: text.slice(i, end), value };
    const close = text[value] === '[' || text[value] === '{' ? closingOf(text, value) : valueEnd(text, value);
    if (close < 0) return false;
    i = skipSpace(text, close + 1);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return true;
}

/** Whether a member's name as written is `key` (`want`: the key as JSON writes it, the usual spelling). */
const isNamed = (name: string, key: string, want: string): boolean =>
  name === want || JSON.parse(name) === key;

/** Index where the value of the top-level member `key` begins, or undefined. */
function memberValueAt(text: string, key: string): number | undefined {
  const want = JSON.stringify(key);
  for (const m of topLevelMembers(text)) if (isNamed(m.name, key, want)) return m.value;
  return undefined;
}

/** Where the value under `key` at the top level of the object `text` holds begins and ends (both included). */
function topLevelSpan(text: string, key: string): { value: number; close: number } | undefined {
  const value = memberValueAt(text, key);
  if (value === undefined) return undefined;
  const close = text[value] === '[' || text[value] === '{' ? closingOf(text, value) : valueEnd(text, value);
  return close < 0 ? undefined : { value, close };
}

/** The text with the value under `key` at its top level replaced by `value` (JSON text), or undefined when it has no such key. */
export function withTopLevelValue(text: string, key: string, value: string): string | undefined {
  const span = topLevelSpan(text, key);
  return span === undefined ? undefined : `${text.slice(0, span.value)}${value}${text.slice(span.close + 1)}`;
}

/**
 * `text` with the value under `key` at its top level as `source` has it, byte for byte (`text`
 * as it is when either lacks the key): a body written anew keeps the client's own bytes there.
 */
export function withTopLevelValueOf(text: string, source: string, key: string): string {
  const value = topLevelValueText(source, key);
  return value === undefined ? text : (withTopLevelValue(text, key, value) ?? text);
}

/** The value under `key` at the top level of the object `text` holds, as the bytes it was written in. */
export function topLevelValueText(text: string, key: string): string | undefined {
  const span = topLevelSpan(text, key);
  return span === undefined ? undefined : text.slice(span.value, span.close + 1);
}
