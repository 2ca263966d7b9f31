import { describe, expect, it } from '@jest/globals';
import {
  rawNumbersIn,
  rawNumbersInParsed,
  rememberRawNumbers,
  restoreRawNumbers,
  stringifyWithRawNumbers,
} from '#src/formats/raw-numbers.js';
import type { Json } from '#src/messages/message.js';

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

  it('D2: a literal beyond a double (1e400) reads as null, which is JSON, and is written back as its text', () => {
    const text = '{"a":[1e400,2],"b":{"c":-1e400},"d":1}';
    const plain = JSON.parse(text) as Json;
    rememberRawNumbers(text, plain);
    expect(plain).toEqual({ a: [null, 2], b: { c: null }, d: 1 });
    const at = rawNumbersIn(plain);
    expect(at).toEqual([
      [['a', 0], '1e400'],
      [['b', 'c'], '-1e400'],
    ]);
    expect(stringifyWithRawNumbers(restoreRawNumbers(plain, at))).toBe(
      '{"a":[1e400,2],"b":{"c":-1e400},"d":1}',
    );
  });

  it('D2: the raw numbers of parsed items are found item by item; items without any are not walked', () => {
    const text = '[{"a":1},{"b":[2.50]},{"c":"1.0"}]';
    const items = JSON.parse(text) as unknown[];
    rememberRawNumbers(text, items);
    expect(rawNumbersInParsed(items)).toEqual([[[1, 'b', 0], '2.50']]);
    expect(rawNumbersInParsed(items)).toEqual(rawNumbersIn(items));
  });
});
