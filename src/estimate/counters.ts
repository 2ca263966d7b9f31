import { createRequire } from 'node:module';
import type { Tiktoken, TiktokenEncoding } from 'tiktoken';
import { boundedCounter } from './bounded-encode.js';
import { piecePattern } from './pieces.js';

/** Counts tokens in a piece of text. Pure from the caller's point of view. */
export interface TokenCounter {
  /** `o200k_base`, `cl100k_base` or `chars` (the fallback). */
  readonly name: EncodingName;
  count(text: string): number;
}

/** Tokenizer used for estimates: a tiktoken encoding, or `chars` (about 4 UTF-8 bytes a token). */
export type EncodingName = 'o200k_base' | 'cl100k_base' | 'chars';

// Each get_encoding costs 100–300 ms and ~18 MB of WASM memory that GC never returns,
// so one encoder per encoding per process.
const encoders = new Map<TiktokenEncoding, Tiktoken>();

// tiktoken compiles its WASM as soon as it is loaded, so it is loaded with the first encoder:
// the `chars` estimator and commands that count nothing never pay for it. Its Node build is
// CommonJS, so a synchronous require keeps counting synchronous.
const requireCjs = createRequire(import.meta.url);

function encoderFor(name: TiktokenEncoding): Tiktoken {
  let enc = encoders.get(name);
  if (!enc) {
    const { get_encoding } = requireCjs('tiktoken') as typeof import('tiktoken');
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
 * {@link charsCounter} when the encoder cannot load. Long runs are counted in bounded
 * pieces, so counting is linear in the text's length (see bounded-encode.ts).
 */
export function tiktokenCounter(name: TiktokenEncoding = 'o200k_base'): TokenCounter {
  let enc: Tiktoken;
  try {
    enc = encoderFor(name);
  } catch {
    return charsCounter;
  }
  return { name: name as EncodingName, count: boundedCounter(enc, piecePattern(name)) };
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
