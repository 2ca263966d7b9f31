import { describe, expect, it } from '@jest/globals';
import { rawNumbersIn, rememberRawNumbers } from '#src/formats/raw-numbers.js';

function remembered(text: string): Array<[Array<string | number>, string]> {
  const plain = JSON.parse(text) as unknown;
  rememberRawNumbers(text, plain);
  return rawNumbersIn(plain);
}

describe('raw number literals (D2)', () => {
  it('D2: literals outside strings that JSON.parse would change are remembered', () => {
    expect(remembered('{"a":[1.0,2,-0],"b":{"c":1e5,"d":12345678901234567890}}')).toEqual([
      [['a', 0], '1.0'],
      [['a', 2], '-0'],
      [['b', 'c'], '1e5'],
      [['b', 'd'], '12345678901234567890'],
    ]);
  });

  it('D2: number-like text inside strings (escaped quotes too) is not a literal', () => {
    expect(remembered('{"a":"2.50 \\" 1.0 \\\\","b":[3,"1e5"],"c":-4.25}')).toEqual([]);
    expect(remembered('{"a":"x \\"1.0\\"","b":2.50}')).toEqual([[['b'], '2.50']]);
  });
});
