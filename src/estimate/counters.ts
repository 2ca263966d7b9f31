import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Tiktoken, TiktokenEncoding } from 'tiktoken';
import { boundedCounter } from './bounded-encode.js';
import { piecePattern } from './pieces.js';
import { createTextCache, type TextCache } from './text-cache.js';

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
 * Texts at least this long are also remembered whole, by a digest of their text: the digest
 * costs about a sixth of counting a text whose blocks are all remembered (8,000 characters:
 * 10 µs against 60 µs), so a text seen again (a file every session reads, the history a new
 * session brings) is not scanned again.
 */
const WHOLE_MIN_LENGTH = 512;
// About 30 bytes a digest, so a few hundred KiB at most; never the texts themselves.
const WHOLE_CACHE_SIZE = 8_192;

/** What one encoding counts with, beside its {@link TokenCounter}. */
interface Counting {
  /** Counts a text no pass counted ahead, remembered whole by `key` when long. */
  whole(text: string, key?: string): number;
  /** The remembered count of a long text by its digest. */
  wholes: TextCache;
  /**
   * Counts made ahead of a synchronous pass, by text (see {@link precount}); each entry holds
   * how many passes still wait for it.
   */
  ahead: Map<string, { tokens: number; waiting: number }>;
}
const countings = new Map<TiktokenEncoding, Counting>();

const digestOf = (text: string): string => hash('sha1', text, 'base64');

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
  const wholes = createTextCache(WHOLE_CACHE_SIZE);
  const ahead = new Map<string, { tokens: number; waiting: number }>();
  const whole = (text: string, key?: string): number => {
    if (text.length < WHOLE_MIN_LENGTH) return bounded(text);
    const k = key ?? digestOf(text);
    let n = wholes.get(k);
    if (n === undefined) wholes.set(k, (n = bounded(text)));
    return n;
  };
  countings.set(name, { whole, wholes, ahead });
  const counter: TokenCounter = {
    name: name as EncodingName,
    count: (text) => (ahead.size > 0 ? ahead.get(text)?.tokens : undefined) ?? whole(text),
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
  tiktokenCounter(encoding);
  const counting = countings.get(encoding);
  if (counting === undefined) return () => undefined;
  const { ahead, wholes, whole } = counting;
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
      let entry = ahead.get(text);
      if (entry === undefined) {
        const key = text.length < WHOLE_MIN_LENGTH ? undefined : digestOf(text);
        const tokens = key === undefined ? undefined : wholes.get(key);
        // Others get in before a text that still has to be counted, never after the last one:
        // a request that yields once its work is done only waits behind everyone else's.
        if (tokens === undefined && performance.now() - since >= sliceMs) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          since = performance.now();
        }
        // Another pass may have counted it while this one waited.
        entry = ahead.get(text);
        if (entry === undefined)
          ahead.set(text, (entry = { tokens: tokens ?? whole(text, key), waiting: 0 }));
      }
      entry.waiting++;
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
  countings.clear();
}
