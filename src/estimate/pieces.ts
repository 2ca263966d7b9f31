import type { EncodingName } from './counters.js';
import { createTextCache } from './text-cache.js';

/**
 * Counting by pre-tokenizer pieces. tiktoken splits text with a regex and runs BPE
 * on each piece separately, so a text's count is the sum of its pieces' counts. Pieces repeat
 * (words, identifiers, numbers, indentation): remembering each piece's count makes a large
 * tool result cost one regex pass and map look-ups instead of BPE on every piece (a 50 MB log
 * was 28 s of CPU, nearly all in the WASM encoder). The regexes are tiktoken's own patterns.
 */

/** Unicode White_Space, which the Rust regex in tiktoken reads as `\s` (JS `\s` differs: U+FEFF, U+0085). */
const WS = '\\t\\n\\v\\f\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const S = `[${WS}]`;
const NOT_S = `[^${WS}]`;
/** `(?i:'s|'t|'re|'ve|'m|'ll|'d)` spelled out: JS on Node 20 has no inline flags; ſ folds to s. */
const CONTRACTION = "'(?:[sSſ]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])";
const UPPER = '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]';
const LOWER = '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]';

const PATTERNS: Partial<Record<string, string>> & Record<Exclude<EncodingName, 'chars'>, string> = {
  o200k_base: [
    `[^\\r\\n\\p{L}\\p{N}]?${UPPER}*${LOWER}+(?:${CONTRACTION})?`,
    `[^\\r\\n\\p{L}\\p{N}]?${UPPER}+${LOWER}*(?:${CONTRACTION})?`,
    '\\p{N}{1,3}',
    ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*`,
    `${S}*[\\r\\n]+`,
    `${S}+(?!${NOT_S})`,
    `${S}+`,
  ].join('|'),
  cl100k_base: [
    CONTRACTION,
    '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+',
    '\\p{N}{1,3}',
    ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*`,
    `${S}*[\\r\\n]+`,
    `${S}+(?!${NOT_S})`,
    `${S}+`,
  ].join('|'),
};

/** The pre-tokenizer pattern of an encoding (global, Unicode); undefined for encodings not listed. */
export function piecePattern(name: string): RegExp | undefined {
  const source = PATTERNS[name];
  return source === undefined ? undefined : new RegExp(source, 'gu');
}

// Distinct pieces remembered (short strings: a few MB at most).
const PIECE_CACHE_SIZE = 200_000;

/**
 * A counting function over `encodeLength` (the encoder, called on a whole text) that sums
 * remembered piece counts and encodes only new pieces, one call each. Exact: each piece gets
 * the BPE it gets inside the whole text. Measured against encoding 8 KB chunks whole: logs
 * 8.5×, prose 7.7×, source code 3.7× faster; random base64 (every piece new) the same.
 * Meant for texts without pathological runs (bounded-encode.ts cuts those out first).
 */
export function pieceCounter(
  encodeLength: (text: string) => number,
  pattern: RegExp,
): (text: string) => number {
  const known = createTextCache(PIECE_CACHE_SIZE);
  return (text) => {
    const pieces = text.match(pattern);
    if (pieces === null) return encodeLength(text);
    let n = 0;
    for (const p of pieces) {
      let k = known.get(p);
      if (k === undefined) {
        k = encodeLength(p);
        known.set(p, k);
      }
      n += k;
    }
    return n;
  };
}
