import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { charCodeIn, joinedText, piecesBetween, withPiece } from '#src/serve/text-pieces.js';

/** A text held in pieces reads as the one string they make, whatever the cuts. */

const piecesArb = fc.array(fc.string({ maxLength: 20 }), { maxLength: 20 });

describe('a text held in pieces', () => {
  it('D2: slices and code units read from the pieces are those of the joined text', () => {
    fc.assert(
      fc.property(piecesArb, fc.nat(), fc.nat(), (pieces, a, b) => {
        const text = pieces.join('');
        expect(joinedText(pieces)).toBe(text);
        const start = a % (text.length + 1);
        const end = start + (b % (text.length - start + 1));
        expect(piecesBetween(pieces, start, end).join('')).toBe(text.slice(start, end));
        if (start < text.length) expect(charCodeIn(pieces, start)).toBe(text.charCodeAt(start));
      }),
      { numRuns: 300 },
    );
  });

  it('D2: a piece added keeps the text, and many pieces are joined into one', () => {
    let pieces: readonly string[] = [];
    let text = '';
    const counts: number[] = [];
    for (let i = 0; i < 40; i++) {
      pieces = withPiece(pieces, `piece ${i};`);
      text += `piece ${i};`;
      expect(pieces.join('')).toBe(text);
      counts.push(pieces.length);
    }
    expect(Math.max(...counts)).toBeLessThanOrEqual(16);
    expect(counts).toContain(1);
    expect(withPiece(['a'], '')).toEqual(['a']);
  });
});
