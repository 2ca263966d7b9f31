import { afterAll, describe, expect, it } from '@jest/globals';
import { get_encoding } from 'tiktoken';
import {
  countingSegments,
  freeEncoders,
  MAX_COUNTED_RUN,
  tiktokenCounter,
} from '../../../src/estimate/counters.js';

afterAll(freeEncoders);

const longestRun = (s: string): number => Math.max(0, ...(s.match(/\S+/gu) ?? []).map((r) => [...r].length));

describe('long whitespace-free runs (T1)', () => {
  it('T1: a CJK page or a long token-free run is encoded in bounded segments (tiktoken BPE is quadratic per piece)', () => {
    const text = `intro ${'你好世界'.repeat(5_000)} tail ${'a'.repeat(3_000)}\n😀${'😀'.repeat(700)}`;
    const segments = countingSegments(text);
    expect(segments.join('')).toBe(text);
    for (const s of segments) expect(longestRun(s)).toBeLessThanOrEqual(MAX_COUNTED_RUN + 1);
    // No segment boundary splits a surrogate pair.
    for (const s of segments) expect(s).toBe(Buffer.from(s, 'utf8').toString('utf8'));
  });

  it('T1: ordinary text (no run over the limit) is one segment, counted exactly', () => {
    const text = 'word '.repeat(10_000) + '你好 '.repeat(2_000);
    expect(countingSegments(text)).toEqual([text]);
    const enc = get_encoding('o200k_base');
    try {
      expect(tiktokenCounter('o200k_base').count(text)).toBe(enc.encode(text, [], []).length);
    } finally {
      enc.free();
    }
  });

  it('T1: a segmented CJK run counts within 1 % of encoding it whole', () => {
    const text = '长期会话需要在上下文窗口内保持。'.repeat(300);
    const enc = get_encoding('o200k_base');
    try {
      const exact = enc.encode(text, [], []).length;
      const got = tiktokenCounter('o200k_base').count(text);
      expect(Math.abs(got - exact)).toBeLessThanOrEqual(Math.ceil(exact / 100));
    } finally {
      enc.free();
    }
  });
});
