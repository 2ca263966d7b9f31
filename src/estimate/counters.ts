import { get_encoding, type Tiktoken, type TiktokenEncoding } from 'tiktoken';

/** Counts tokens in a piece of text. Pure from the caller's point of view. */
export interface TokenCounter {
  /** `o200k_base`, `cl100k_base` or `chars` (the fallback). */
  readonly name: EncodingName;
  count(text: string): number;
}

export type EncodingName = 'o200k_base' | 'cl100k_base' | 'chars';

// Each get_encoding costs 100–300 ms and ~18 MB of WASM memory that GC never returns,
// so one encoder per encoding per process (T2, toolchain.md §2.4).
const encoders = new Map<TiktokenEncoding, Tiktoken>();

function encoderFor(name: TiktokenEncoding): Tiktoken {
  let enc = encoders.get(name);
  if (!enc) {
    enc = get_encoding(name);
    encoders.set(name, enc);
  }
  return enc;
}

/**
 * The documented fallback: ceil(UTF-8 bytes / 4). Bytes rather than UTF-16 units because
 * CJK text is ~3 bytes a character and ~0.8 tokens a character; see bench for its error.
 */
export const charsCounter: TokenCounter = {
  name: 'chars',
  count: (text) => (text.length === 0 ? 0 : Math.ceil(Buffer.byteLength(text, 'utf8') / 4)),
};

/**
 * A tiktoken counter. Special-token text such as `<|endoftext|>` is counted as plain
 * text (T-rule: never throw on untrusted transcript content). Falls back to
 * {@link charsCounter} when the encoder cannot load.
 */
export function tiktokenCounter(name: TiktokenEncoding = 'o200k_base'): TokenCounter {
  let enc: Tiktoken;
  try {
    enc = encoderFor(name);
  } catch {
    return charsCounter;
  }
  return {
    name: name as EncodingName,
    count: (text) => {
      let n = 0;
      for (const segment of countingSegments(text)) n += enc.encode(segment, [], []).length;
      return n;
    },
  };
}

/** Longest whitespace-free run (in code points) that is encoded in one piece; longer runs are cut. */
export const MAX_COUNTED_RUN = 512;

const LONG_RUN = new RegExp(`\\S{${MAX_COUNTED_RUN + 1},}`, 'gu');

/**
 * Splits text for counting (T1). tiktoken's BPE is quadratic in the length of one
 * pre-tokenized piece, and a whitespace-free run (a CJK page, a long identifier, `aaaa…`)
 * is one piece: 20,000 CJK characters took seconds. Runs over {@link MAX_COUNTED_RUN} code
 * points are cut every that many code points (never inside a surrogate pair), which costs at
 * most about one token per cut; text without such runs stays one segment and counts exactly.
 */
export function countingSegments(text: string): string[] {
  if (text.length <= MAX_COUNTED_RUN) return [text];
  const segments: string[] = [];
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    const start = run.index;
    let points = 0;
    // Walk the run by code points; cut after every MAX_COUNTED_RUN of them except at its end.
    for (let i = start; i < start + run[0].length;) {
      const unit = text.codePointAt(i) ?? 0;
      i += unit > 0xffff ? 2 : 1;
      if (++points % MAX_COUNTED_RUN === 0 && i < start + run[0].length) {
        segments.push(text.slice(from, i));
        from = i;
      }
    }
  }
  segments.push(text.slice(from));
  return segments;
}

/** Returns a counter for the named encoding (`chars` never loads WASM). */
export function counterFor(name: EncodingName): TokenCounter {
  return name === 'chars' ? charsCounter : tiktokenCounter(name);
}

/** Frees every loaded encoder (call at process shutdown or in `afterAll`). */
export function freeEncoders(): void {
  for (const enc of encoders.values()) enc.free();
  encoders.clear();
}
