import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { get_encoding, type Tiktoken, type TiktokenEncoding } from 'tiktoken';
import { boundedCounter, LONG_UNIT } from '#src/estimate/bounded-encode.js';
import { piecePattern } from '#src/estimate/pieces.js';

const encoders = new Map<TiktokenEncoding, Tiktoken>();
afterAll(() => encoders.forEach((enc) => enc.free()));
function encoder(name: TiktokenEncoding): Tiktoken {
  if (!encoders.has(name)) encoders.set(name, get_encoding(name));
  return encoders.get(name)!;
}

// Characters where the JS and Rust regex dialects or case folding could part ways, and
// the usual suspects: contractions, digits, CRLF, combining marks, CJK, emoji, NEL, BOM.
const ATOMS = [
  "'s",
  "'S",
  "'ſ",
  "'ll",
  "'LL",
  "'Re",
  "'d",
  "'t",
  'ſ',
  'don',
  'The',
  'HTTPServer',
  'x',
  'É',
  'e\u0301',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\u0085',
  '\ufeff',
  '\u00a0',
  '\u2028',
  '\u3000',
  '7',
  '12345',
  '٣',
  '½',
  '.',
  '...',
  '/',
  '//\n',
  '{',
  '});',
  '->',
  '_',
  '$',
  '#',
  '你好',
  'こんにちは',
  '😀',
  '👩‍💻',
  '🇫🇷',
  'Ωμέγα',
  'Привет',
  'مرحبا',
  '<|endoftext|>',
];

describe('counting by remembered pieces is exact (T1)', () => {
  it.each(['o200k_base', 'cl100k_base'] as const)(
    'T1: %s: random texts count as encoding them whole, pieces remembered across texts',
    (name) => {
      const enc = encoder(name);
      const count = boundedCounter(enc, piecePattern(name));
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...ATOMS), { maxLength: 300 }), (atoms) => {
          const text = atoms.join('');
          expect(count(text)).toBe(enc.encode_ordinary(text).length);
        }),
        { numRuns: 400, seed: 15 },
      );
    },
  );

  // Source code and logs: ASCII stretches (split with the ASCII twin of the pattern) around a
  // few characters beyond it, next to every kind of white space and punctuation.
  const CODE = [
    ...['const', ' x', ' = ', 'Foo', 'HTTPServer', 'don', "'s", "'S", "'LL", "'Re", "'ve", "'M", "'d", "'T"],
    ...['(a, b)', ';\n', '});', '_', '$', '#', '//\n', '...', ' -> ', '123456', '7', '<|endoftext|>'],
    ...[' ', '  ', '\t', '\v', '\f', '\n', '\r\n', '\r'],
  ];
  const RARE = ['→', '…', 'é', 'ſ', '\u00a0', '\u3000', '\u0085', '你', '😀', 'e\u0301'];
  it.each(['o200k_base', 'cl100k_base'] as const)(
    'T1: %s: mostly ASCII texts with a few other characters count as encoding them whole',
    (name) => {
      const enc = encoder(name);
      const count = boundedCounter(enc, piecePattern(name));
      const atom = fc.oneof(
        { weight: 150, arbitrary: fc.constantFrom(...CODE) },
        { weight: 1, arbitrary: fc.constantFrom(...RARE) },
      );
      fc.assert(
        fc.property(fc.array(atom, { minLength: 300, maxLength: 1500 }), (atoms) => {
          const text = atoms.join('');
          expect(count(text)).toBe(enc.encode_ordinary(text).length);
        }),
        { numRuns: 150, seed: 21 },
      );
    },
  );

  it('T1: every ASCII text of one or two characters, and random ones of three, counts as encoding it (o200k_base)', () => {
    const enc = encoder('o200k_base');
    const count = boundedCounter(enc, piecePattern('o200k_base'));
    const ascii = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
    const texts = [...ascii, ...ascii.flatMap((a) => ascii.map((b) => a + b))];
    const wrong = texts.filter((text) => count(text) !== enc.encode_ordinary(text).length);
    expect(wrong).toEqual([]);
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)),
          minLength: 3,
          maxLength: 3,
        }),
        (text) => {
          expect(count(text)).toBe(enc.encode_ordinary(text).length);
          expect(count(text)).toBe(enc.encode_ordinary(text).length);
        },
      ),
      { numRuns: 1000, seed: 3 },
    );
  });

  it('T1: random Unicode strings count as encoding them whole (o200k_base)', () => {
    const enc = encoder('o200k_base');
    const count = boundedCounter(enc, piecePattern('o200k_base'));
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (text) => {
        expect(count(text)).toBe(enc.encode_ordinary(text).length);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  // The same lines again in other orders, after other text: blocks remembered from one text are
  // met in the next at other offsets, and must count as the whole text encodes.
  it.each(['o200k_base', 'cl100k_base'] as const)(
    'T1: %s: texts made of lines seen before count as encoding them whole',
    (name) => {
      const enc = encoder(name);
      const count = boundedCounter(enc, piecePattern(name));
      const line = fc.array(fc.constantFrom(...ATOMS.slice(0, 40)), { minLength: 8, maxLength: 30 });
      fc.assert(
        fc.property(
          fc.array(line, { minLength: 30, maxLength: 60 }),
          fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
          (lines, picks) => {
            const texts = lines.map((atoms) => atoms.join(''));
            for (const pick of picks) {
              const order = texts.map((_, i) => texts[(i * (pick | 1) + pick) % texts.length]!);
              const text = `${'x'.repeat(pick % 7)} ${order.join('\n')}`;
              expect(text.length).toBeGreaterThan(LONG_UNIT); // counted in blocks, not whole
              expect(count(text)).toBe(enc.encode_ordinary(text).length);
            }
          },
        ),
        { numRuns: 60, seed: 33 },
      );
    },
  );

  it('T1: encodings without a known pattern are counted by chunks (no pattern)', () => {
    expect(piecePattern('p50k_base')).toBeUndefined();
    expect(piecePattern('o200k_base')?.flags).toBe('gu');
  });
});
