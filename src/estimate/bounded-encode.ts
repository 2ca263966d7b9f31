import type { Tiktoken } from 'tiktoken';
import { isCut, pieceCounter } from './pieces.js';
import { createTextCache } from './text-cache.js';

/**
 * Counting in bounded pieces. tiktoken splits text into pieces with a regex and runs
 * BPE on each piece in time quadratic in the piece's length; one whitespace run or one
 * whitespace-free run is one piece, so 320,000 spaces took 101 s and multi-megabyte runs
 * crashed the WASM encoder or overflowed the stack. Here every encode call gets at most
 * {@link ORDINARY_CHUNK} + {@link LONG_UNIT} code units and no piece longer than
 * {@link LONG_UNIT}, so counting is linear in the text's length and never recursive.
 */

/** Ordinary text is encoded this many code units at a time (bounds WASM memory growth). */
export const ORDINARY_CHUNK = 8_192;
/** A unit (see {@link isCut}) longer than this is counted in overlapping windows. */
export const LONG_UNIT = 512;
/**
 * Window length for long units. BPE on a window costs O(WINDOW²), so the cost per character
 * grows with the window; 64 keeps it near tiktoken's cost for ordinary text (profiled: 256
 * spent most of its time in BPE merges).
 */
export const WINDOW = 64;
/** A window holding too few tokens to keep some (long whitespace tokens) is widened to this. */
export const WIDE_WINDOW = 256;
/** Tokens dropped from a window's end: only they may differ from encoding the unit whole. */
const TAIL = 3;
// Windows of a uniform run repeat exactly, so their results are remembered (bounded).
const STEP_MEMO_SIZE = 4_096;
// Byte length of every token id seen so far (o200k has about 200,000 ids).
const TOKEN_LENGTH_SLOTS = 1 << 18;

/**
 * Ordinary text counted by pieces is also counted by blocks, remembered by their text: a block
 * ends at a cut where the run of text since the cut before hashes to low bits of zero, so where
 * blocks end depends only on the text around them, and a text seen before (a file read again,
 * the same log) is counted by a few block look-ups wherever it sits in a request.
 */
const BLOCK_MIN = 32;
/** About one cut in this many ends a block (a cut is about a word). */
const BLOCK_EVERY = 16;
// Blocks remembered: about a hundred characters each, and never 512 or more (a cache that
// outlives a request keeps no text that long), so 4 MiB at the very most.
const BLOCK_CACHE_SIZE = 4_096;
const BLOCK_MAX = 512;
/** A block this long ends at the next cut whatever the word before it: short enough to keep. */
const BLOCK_LONG = 384;

/**
 * Whether ordinary text ends its chunk at a cut: at the chunk's limit, or, counted by blocks,
 * where the run before the cut (its `hash`) ends a block.
 */
const endsChunk = (length: number, hash: number, blocks: boolean): boolean =>
  length >= ORDINARY_CHUNK ||
  (blocks && ((length >= BLOCK_MIN && hash % BLOCK_EVERY === 0) || length >= BLOCK_LONG));

/** Counts blocks of ordinary text with `ordinary`, remembering each block's count by its text. */
function blockCounter(ordinary: (text: string) => number): (text: string) => number {
  const blocks = createTextCache(BLOCK_CACHE_SIZE);
  return (s) => {
    if (s.length === 0) return 0;
    if (s.length >= BLOCK_MAX) return ordinary(s);
    let n = blocks.get(s);
    if (n === undefined) {
      n = ordinary(s);
      // A copy of its own: a slice would keep the whole text it was cut from alive.
      blocks.set((' ' + s).slice(1), n);
    }
    return n;
  };
}

interface Step {
  tokens: number;
  advance: number;
}

/** The last token end before the window's tail that is also a character boundary. */
function keepAllButTail(
  window: string,
  tokens: Uint32Array,
  tokenBytes: (token: number) => number,
): Step | undefined {
  const target = tokens.length - TAIL;
  const lowest = Math.max(1, Math.floor(tokens.length / 2));
  let best: Step | undefined;
  let bytes = 0; // UTF-8 end of token k
  let at = 0; // UTF-16 index reached in the window
  let atBytes = 0; // UTF-8 offset of `at`
  for (let k = 1; k <= target && k < tokens.length; k++) {
    bytes += tokenBytes(tokens[k - 1]!);
    while (atBytes < bytes && at < window.length) {
      const c = window.codePointAt(at)!;
      atBytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      at += c > 0xffff ? 2 : 1;
    }
    // A token may end inside a multi-byte character; restart only at a character boundary.
    if (k >= lowest && atBytes === bytes) best = { tokens: k, advance: at };
  }
  return best;
}

/** UTF-8 length of a token's bytes, remembered per token id. */
function tokenByteLengths(enc: Tiktoken): (token: number) => number {
  const lengths = new Int32Array(TOKEN_LENGTH_SLOTS);
  return (token) => {
    if (token >= TOKEN_LENGTH_SLOTS) return enc.decode_single_token_bytes(token).length;
    let n = lengths[token]!;
    if (n === 0) {
      n = enc.decode_single_token_bytes(token).length;
      lengths[token] = n;
    }
    return n;
  };
}

/**
 * A counting function over one encoder, with a bounded memo of window steps. With the
 * encoder's pre-tokenizer `pieces` pattern, ordinary text is counted by remembered pieces
 * (pieces.ts); without it, by whole chunks.
 */
export function boundedCounter(enc: Tiktoken, pieces?: RegExp): (text: string) => number {
  const steps = new Map<string, Step | null>();
  const tokenBytes = tokenByteLengths(enc);
  // encode_ordinary counts special-token text such as <|endoftext|> as plain text.
  const encodeLength = (s: string): number => (s.length === 0 ? 0 : enc.encode_ordinary(s).length);
  const ordinary = pieces ? pieceCounter(encodeLength, pieces) : encodeLength;

  /**
   * One window of a long unit: encode it, keep its tokens but the last few (tokens far from
   * the artificial end are the ones encoding the whole unit gives) and restart after them,
   * at a character boundary. Within 0.1 % of the exact count. `wide` says whether a window
   * with too few tokens may still be widened; if not, the whole window is kept.
   */
  function step(window: string, wide: boolean): Step | undefined {
    const hit = steps.get(window);
    if (hit !== undefined) return hit ?? undefined;
    const tokens = enc.encode_ordinary(window);
    const result =
      keepAllButTail(window, tokens, tokenBytes) ??
      (wide ? { tokens: tokens.length, advance: window.length } : null);
    if (steps.size >= STEP_MEMO_SIZE) steps.clear();
    steps.set(window, result); // null remembers "too few tokens, widen" for uniform runs
    return result ?? undefined;
  }

  function countLongUnit(text: string, from: number, to: number): number {
    let n = 0;
    let pos = from;
    while (to - pos > WINDOW) {
      const s = stepAt(text, pos, to, WINDOW) ?? stepAt(text, pos, to, WIDE_WINDOW);
      if (!s) break; // the rest fits in one wide window
      n += s.tokens;
      pos += s.advance;
    }
    return n + encodeLength(text.slice(pos, to));
  }

  function stepAt(text: string, pos: number, to: number, length: number): Step | undefined {
    if (to - pos <= length) return undefined;
    let end = pos + length;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--; // never split a surrogate pair
    return step(text.slice(pos, end), length === WIDE_WINDOW);
  }

  const block = pieces ? blockCounter(ordinary) : ordinary;

  return (text: string): number => {
    if (text.length <= LONG_UNIT) return text.length === 0 ? 0 : ordinary(text);
    let n = 0;
    let chunkStart = 0;
    let unitStart = 0;
    let hash = 0; // of the run since the last cut
    for (let i = 1; i <= text.length; i++) {
      if (i < text.length && !isCut(text, i)) {
        hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
        continue;
      }
      if (i - unitStart > LONG_UNIT) {
        n += block(text.slice(chunkStart, unitStart)) + countLongUnit(text, unitStart, i);
        chunkStart = i;
      } else if (i === text.length || endsChunk(i - chunkStart, hash, pieces !== undefined)) {
        n += block(text.slice(chunkStart, i));
        chunkStart = i;
      }
      unitStart = i;
      hash = 0;
    }
    return n;
  };
}
