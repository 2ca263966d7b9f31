import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { previewText } from '#src/summary/preview.js';

afterAll(freeEncoders);

const est = createEstimator();
// Distinct numbered lines, so every cut is visible in what is left.
const text = Array.from({ length: 1_500 }, (_, i) => `line ${i}: value ${(i * 7919) % 10007}`).join('\n');

/** The number a preview's marker names, and the tokens of the original really left out. */
function markerAndCut(preview: string): { said: number; cut: number } {
  const m = /\n\[… (\d+) tokens elided by compactor …\]\n/.exec(preview);
  if (m === null) throw new Error('no marker in the preview');
  const head = preview.slice(0, m.index);
  const tail = preview.slice(m.index + m[0].length);
  expect(text.startsWith(head)).toBe(true);
  expect(text.endsWith(tail)).toBe(true);
  return { said: Number(m[1]), cut: est.text(text.slice(head.length, text.length - tail.length)) };
}

describe('previews say the truth', () => {
  it('L2: the marker names the tokens of the original that were cut (within a few tokens at the joins)', () => {
    const { said, cut } = markerAndCut(previewText(text, 2_000, est));
    expect(cut).toBeGreaterThan(10_000);
    expect(Math.abs(said - cut)).toBeLessThanOrEqual(4);
  });

  it('L2: a preview of a preview names everything cut from the original, not only the second cut', () => {
    const first = previewText(text, 4_000, est);
    const second = previewText(first, 1_000, est);
    expect(second.match(/tokens elided by compactor/g)).toHaveLength(1);
    const { said, cut } = markerAndCut(second);
    expect(Math.abs(said - cut)).toBeLessThanOrEqual(8);
    expect(est.text(second)).toBeLessThanOrEqual(1_000);
  });
});
