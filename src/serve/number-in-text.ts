/*
 * Sets one number of a JSON text in place, every other byte as it came. The proxy lowers a
 * client's output limit this way when it changes nothing else: written again from its parsed
 * form, the request would differ from the client's bytes (key order, escapes) and so from the
 * prefix the provider cached for the previous request.
 */

const BACKSLASH = 0x5c;

/** Index just past the string that opens at `i` (a quote). */
function stringEnd(text: string, i: number): number {
  // Most of a request's bytes are inside strings: jump from quote to quote.
  for (let q = text.indexOf('"', i + 1); q !== -1; q = text.indexOf('"', q + 1)) {
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
  return text.length;
}

/**
 * The text with the number at `path` (object keys from the top) replaced by `n`, or undefined
 * when no number stands there (the caller then writes the request again).
 */
export function withNumberAt(text: string, path: readonly string[], n: number): string | undefined {
  // One entry per open container: the key being read in it (objects) or null (arrays).
  const keys: Array<string | null> = [];
  let lastString: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      const end = stringEnd(text, i);
      lastString = text.slice(i, end);
      i = end - 1;
    } else if (ch === ':') {
      if (lastString !== undefined) keys[keys.length - 1] = JSON.parse(lastString) as string;
    } else if (ch === '{') keys.push('');
    else if (ch === '[') keys.push(null);
    else if (ch === '}' || ch === ']') keys.pop();
    else if (ch === ',') {
      if (keys.length > 0 && keys[keys.length - 1] !== null) keys[keys.length - 1] = '';
    } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let end = i + 1;
      while (end < text.length && /[0-9eE.+-]/.test(text[end])) end++;
      if (keys.length === path.length && keys.every((k, d) => k === path[d]))
        return `${text.slice(0, i)}${n}${text.slice(end)}`;
      i = end - 1;
    }
  }
  return undefined;
}
