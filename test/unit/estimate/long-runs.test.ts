import { afterAll, describe, expect, it } from '@jest/globals';
import { get_encoding, type Tiktoken, type TiktokenEncoding } from 'tiktoken';
import { randomText } from '#dev/bench/long-runs-bench.js';
import { boundedCounter, LONG_UNIT, ORDINARY_CHUNK } from '#src/estimate/bounded-encode.js';
import { freeEncoders, tiktokenCounter } from '#src/estimate/counters.js';

afterAll(freeEncoders);

const longest = (s: string, re: RegExp): number => Math.max(0, ...(s.match(re) ?? []).map((r) => r.length));

// Reference encoders that encode texts whole, loaded once (each load costs 100–300 ms).
const reference = new Map<TiktokenEncoding, Tiktoken>();
afterAll(() => reference.forEach((enc) => enc.free()));

function withEncoder<T>(name: TiktokenEncoding, f: (enc: Tiktoken) => T): T {
  if (!reference.has(name)) reference.set(name, get_encoding(name));
  return f(reference.get(name)!);
}

const CJK = Array.from({ length: 2_000 }, (_, i) => String.fromCodePoint(0x4e00 + i));
const EMOJI = Array.from({ length: 50 }, (_, i) => String.fromCodePoint(0x1f600 + i));

/** Adversarial texts small enough that encoding them whole (the exact reference) stays quick. */
const ADVERSARIAL: Array<[string, string]> = [
  ['spaces', ' '.repeat(4_000)],
  ['newlines', '\n'.repeat(4_000)],
  ['spaces, tabs, newlines', randomText([' ', ' ', '\n', '\t', '\r\n'], 4_000)],
  ['one letter', 'a'.repeat(4_000)],
  ['random letters', randomText([...'abcdefghijklmnopqrstuvwxyz'], 4_000)],
  ['random CJK', randomText(CJK, 2_000)],
  ['random emoji (surrogate pairs)', randomText(EMOJI, 1_000)],
  ['digits', randomText([...'0123456789'], 4_000)],
  ['punctuation', randomText([...'.,;:!?-_/()[]{}'], 4_000)],
  ['base64', randomText([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'], 4_000)],
  ['one CJK character', '你'.repeat(3_000)],
  ['one emoji', '😀'.repeat(1_500)],
  ['no-break spaces', '\u00a0'.repeat(4_000)],
  ['CRLF pairs', '\r\n'.repeat(2_000)],
  ['a letter then 600 spaces, repeated', ('a' + ' '.repeat(600)).repeat(7)],
  ['a full stop then 700 newlines, repeated', ('.' + '\n'.repeat(700)).repeat(6)],
];

describe('long runs are counted in bounded pieces (T1)', () => {
  it('T1: the encoder never gets a run longer than the unit limit nor an unbounded chunk', () => {
    withEncoder('o200k_base', (enc) => {
      const inputs: string[] = [];
      // The real encoder, recording what it is handed (tiktoken is the library under us).
      const recording = new Proxy(enc, {
        get: (target, key) =>
          key === 'encode_ordinary'
            ? (text: string) => (inputs.push(text), target.encode_ordinary(text))
            : (Reflect.get(target, key) as unknown as (...a: unknown[]) => unknown).bind(target),
      });
      const count = boundedCounter(recording);
      for (const [, text] of ADVERSARIAL) count(text.repeat(4));
      count('word '.repeat(20_000) + ' '.repeat(30_000) + 'x'.repeat(30_000));
      expect(inputs.length).toBeGreaterThan(100);
      for (const s of inputs) {
        expect(s.length).toBeLessThanOrEqual(ORDINARY_CHUNK + LONG_UNIT);
        expect(longest(s, /\s+/gu)).toBeLessThanOrEqual(LONG_UNIT);
        expect(longest(s, /\S+/gu)).toBeLessThanOrEqual(LONG_UNIT);
      }
    });
  });

  it.each(ADVERSARIAL)('T1: %s counts within 0.1 %% of encoding the text whole', (_name, text) => {
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const exact = withEncoder(name, (enc) => enc.encode(text, [], []).length);
      const got = tiktokenCounter(name).count(text);
      expect(Math.abs(got - exact)).toBeLessThanOrEqual(exact / 1000);
    }
  });

  it('T1: ordinary text is counted exactly, in chunks cut only where a piece starts', () => {
    const text = randomText(
      ['word ', 'x', '  ', '\n', 'é', '你', '. ', '.\n', '\u00a0', '\ufeff', ', '],
      40_000,
    );
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const exact = withEncoder(name, (enc) => enc.encode(text, [], []).length);
      expect(tiktokenCounter(name).count(text)).toBe(exact);
    }
  });

  it('T1: 8 million letters without white space count without overflowing the stack', () => {
    // 'a' × 8k encodes to k tokens (checked whole on a small run); the long run must agree.
    const perEight = withEncoder('o200k_base', (enc) => enc.encode('a'.repeat(4_096), [], []).length);
    expect(perEight).toBe(512);
    expect(tiktokenCounter('o200k_base').count('a'.repeat(8_000_000))).toBe(1_000_000);
  });

  it('T1: 4 million mixed spaces and newlines count without crashing the WASM encoder', () => {
    const small = withEncoder('o200k_base', (enc) => enc.encode(' \n'.repeat(2_000), [], []).length);
    const got = tiktokenCounter('o200k_base').count(' \n'.repeat(2_000_000));
    expect(Math.abs(got - small * 1_000)).toBeLessThanOrEqual(small);
  });
});
