/*
 * Plain comparisons for the path runner: no test framework, so a user's Jest or Vitest (or
 * none) can call it. A difference is reported as one line naming the field.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Where `actual` differs from `expected`, or null. Objects match when every expected field
 * matches (extra fields are fine); arrays and plain values must be equal.
 */
export function differenceOf(actual: unknown, expected: unknown, at = 'output'): string | null {
  if (isRecord(expected)) {
    if (!isRecord(actual)) return `${at}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      const found = differenceOf(actual[key], value, `${at}.${key}`);
      if (found !== null) return found;
    }
    return null;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const found = differenceOf(actual[i], expected[i], `${at}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  return Object.is(actual, expected)
    ? null
    : `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}
