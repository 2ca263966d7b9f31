import fc from 'fast-check';

/**
 * JSON values as they arrive from JSON text. `fc.jsonValue()` can produce -0, which no JSON
 * text can carry (it reads back as 0), so a test that stores values as JSON would fail on a
 * value no provider or file can send.
 */
export function wireJson(constraints?: fc.JsonSharedConstraints): fc.Arbitrary<unknown> {
  return fc.jsonValue(constraints).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
}
