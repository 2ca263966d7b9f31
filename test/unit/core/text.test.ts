import { describe, expect, it } from '@jest/globals';
import { clip, headUnits, oneLine, splitsSurrogatePair, tailFrom } from '#src/core/text.js';

const WAVE = '👋'; // two UTF-16 units (a surrogate pair)
const hasLoneSurrogate = (s: string) =>
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

describe('text bounding (one helper for every cut)', () => {
  it('finds cuts that fall inside a surrogate pair, and only those', () => {
    const s = `a${WAVE}b`;
    expect([0, 1, 2, 3, 4].map((i) => splitsSurrogatePair(s, i))).toEqual([false, false, true, false, false]);
    expect(splitsSurrogatePair('\udc00x', 0)).toBe(false);
  });

  it('L2/L3: head and tail cuts never leave a lone surrogate', () => {
    const s = `${WAVE}${WAVE}${WAVE}`;
    for (let i = 0; i <= s.length; i++) {
      expect(hasLoneSurrogate(headUnits(s, i))).toBe(false);
      expect(hasLoneSurrogate(tailFrom(s, i))).toBe(false);
    }
    expect(headUnits(s, 3)).toBe(`${WAVE}`);
    expect(tailFrom(s, 3)).toBe(`${WAVE}`);
  });

  it('clip keeps short text as is and bounds long text to max units with an ellipsis', () => {
    expect(clip('abcdef', 6)).toBe('abcdef');
    expect(clip('abcdefg', 6)).toBe('abcde…');
    expect(clip(`abcd${WAVE}xyz`, 6)).toBe('abcd…');
    expect(clip(`abcd${WAVE}xyz`, 7)).toBe(`abcd${WAVE}…`);
  });

  it('oneLine collapses whitespace before it clips', () => {
    expect(oneLine('  a\n\n b\tc  ')).toBe('a b c');
    expect(oneLine('x'.repeat(500)).length).toBe(400);
    expect(oneLine(`err:\n${'y'.repeat(20)}`, 10)).toBe('err: yyyy…');
  });
});
