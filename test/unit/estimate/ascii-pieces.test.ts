import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { eachAsciiPiece } from '#src/estimate/ascii-pieces.js';
import { piecePattern } from '#src/estimate/pieces.js';

/** The pieces the scan finds in `text`. */
function scanned(text: string): string[] {
  const out: string[] = [];
  eachAsciiPiece(text, 0, text.length, (t, start, end) => out.push(t.slice(start, end)));
  return out;
}

// Where the pattern's alternatives meet: contractions in any case, runs of capitals, digits past
// three, white space before letters, punctuation and line breaks, slashes after line breaks.
const ATOMS = [
  ...["'s", "'S", "'t", "'re", "'RE", "'Ve", "'m", "'ll", "'lL", "'d", "'x", "'", "''"],
  ...['a', 'Z', 'HTTPServer', 'don', 'X', 'abc', 'ABC', '7', '1234567', '_', '$', '(', '});', '...'],
  ...[
    '/',
    '//',
    '/**',
    '\\',
    ' ',
    '  ',
    '\t',
    '\v',
    '\f',
    '\n',
    '\r',
    '\r\n',
    '\n\n',
    ' \n ',
    '\x00',
    '\x7f',
  ],
];

describe('the scan of ASCII text finds the pattern’s pieces (T1)', () => {
  const pattern = piecePattern('o200k_base')!;
  const ascii = fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c));
  const atom = fc.oneof(fc.constantFrom(...ATOMS), ascii);

  it('T1: random ASCII texts are split as o200k’s pattern splits them', () => {
    fc.assert(
      fc.property(fc.array(atom, { maxLength: 60 }), (atoms) => {
        const text = atoms.join('');
        expect(scanned(text)).toEqual(text.match(pattern) ?? []);
      }),
      { numRuns: 5000, seed: 11 },
    );
  });

  it('T1: a stretch of a text is split as the same characters on their own', () => {
    fc.assert(
      fc.property(fc.array(atom, { maxLength: 40 }), fc.nat(), fc.nat(), (atoms, a, b) => {
        const text = atoms.join('');
        const [from, to] = [a % (text.length + 1), b % (text.length + 1)].sort((x, y) => x - y);
        const pieces: string[] = [];
        eachAsciiPiece(text, from!, to!, (t, start, end) => pieces.push(t.slice(start, end)));
        expect(pieces).toEqual(text.slice(from, to).match(pattern) ?? []);
      }),
      { numRuns: 2000, seed: 12 },
    );
  });
});
