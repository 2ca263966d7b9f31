import { describe, expect, it } from '@jest/globals';
import { withNumberAt } from '#src/serve/number-in-text.js';

describe('setting one number of a request text in place', () => {
  it('changes the number at the path and no other byte, whatever strings, escapes and nesting stand around it', () => {
    const text =
      '{"messages":[{"role":"user","content":"say \\"max_tokens\\": 5 and \\\\"},{"max_tokens":7}],' +
      '"meta":{"max_tokens":9},"max_tokens": 64000 ,"stream":true}';
    const out = withNumberAt(text, ['max_tokens'], 1234);
    expect(out).toBe(text.replace('"max_tokens": 64000 ', '"max_tokens": 1234 '));
    expect(JSON.parse(out!)).toEqual({ ...JSON.parse(text), max_tokens: 1234 });
  });

  it('finds a nested path (Gemini names its limit inside generationConfig) and says when no number stands there', () => {
    const text = '{"contents":[],"generationConfig":{"temperature":0.5,"maxOutputTokens":8192}}';
    expect(withNumberAt(text, ['generationConfig', 'maxOutputTokens'], 100)).toBe(
      text.replace('8192', '100'),
    );
    expect(withNumberAt(text, ['maxOutputTokens'], 100)).toBeUndefined();
    expect(withNumberAt('{"max_tokens":"64000"}', ['max_tokens'], 1)).toBeUndefined();
  });
});
