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

// One counter per encoding per process: its remembered pieces and token lengths (a 1 MiB
// table) serve every estimator, so a new session neither starts cold nor adds its own copy.
const counters = new Map<TiktokenEncoding, TokenCounter>();

/**
 * Counts made ahead of a synchronous pass, by encoding and text (see {@link precount}); each
 * entry holds how many passes still wait for it.
 */
const precounted = new Map<TiktokenEncoding, Map<string, { tokens: number; waiting: number }>>();

/**
 * A tiktoken counter. Special-token text such as `<|endoftext|>` is counted as plain
 * text (T-rule: never throw on untrusted transcript content). Falls back to
 * {@link charsCounter} when the encoder cannot load. Long runs are counted in bounded
 * pieces, so counting is linear in the text's length (see bounded-encode.ts).
 */
export function tiktokenCounter(name: TiktokenEncoding = 'o200k_base'): TokenCounter {
  const known = counters.get(name);
  if (known !== undefined) return known;
  let enc: Tiktoken;
  try {
    enc = encoderFor(name);
  } catch {
    return charsCounter;
  }
  const bounded = boundedCounter(enc, piecePattern(name));
  let ahead = precounted.get(name);
  if (ahead === undefined) precounted.set(name, (ahead = new Map()));
  const early = ahead;
  const counter: TokenCounter = {
    name: name as EncodingName,
    count: (text) => (early.size > 0 ? early.get(text)?.tokens : undefined) ?? bounded(text),
  };
  counters.set(name, counter);
  return counter;
}

/** Texts shorter than this are counted when needed: a look-up costs about as much. */
const PRECOUNT_MIN_LENGTH = 256;

/**
 * Counts `texts` ahead of a synchronous pass that will need them (a large request's
 * projection), a slice of at most `sliceMs` at a time with other work let in between, so one
 * large body does not hold the requests of others. Until `release` is called the counter
 * answers these texts from memory. A `chars` encoding counts nothing ahead (it is cheap).
 */
export async function precount(
  encoding: EncodingName,
  texts: Iterable<string>,
  sliceMs = 8,
): Promise<() => void> {
  if (encoding === 'chars') return () => undefined;
  const counter = tiktokenCounter(encoding);
  const ahead = precounted.get(encoding);
  if (ahead === undefined) return () => undefined;
  const mine: string[] = [];
  const release = () => {
    for (const text of mine) {
      const entry = ahead.get(text);
      if (entry !== undefined && --entry.waiting === 0) ahead.delete(text);
    }
  };
  let since = performance.now();
  try {
    for (const text of texts) {
      if (text.length < PRECOUNT_MIN_LENGTH) continue;
      // Others get in before a text that still has to be counted, never after the last one:
      // a request that yields once its work is done only waits behind everyone else's.
      if (!ahead.has(text) && performance.now() - since >= sliceMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        since = performance.now();
      }
      const entry = ahead.get(text);
      if (entry !== undefined) entry.waiting++;
      else ahead.set(text, { tokens: counter.count(text), waiting: 1 });
      mine.push(text);
    }
  } catch (e) {
    release();
    throw e;
  }
  return release;
}

/** Returns a counter for the named encoding (`chars` never loads WASM). */
export function counterFor(name: EncodingName): TokenCounter {
  return name === 'chars' ? charsCounter : tiktokenCounter(name);
}

/** Frees every loaded encoder (call at process shutdown or in `afterAll`). */
export function freeEncoders(): void {
  for (const enc of encoders.values()) enc.free();
  encoders.clear();
  counters.clear();
  precounted.clear();
}
