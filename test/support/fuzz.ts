import fc from 'fast-check';
import { expect } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';

/**
 * Shared settings of the fuzz suites. CI runs a fixed seed and a modest
 * number of runs so the suite stays fast; FUZZ_RUNS=N (and FUZZ_SEED=S) run more or other cases.
 */
export function fuzzParams(defaultRuns: number): fc.Parameters<unknown> {
  const runs = Number(process.env.FUZZ_RUNS ?? defaultRuns);
  const seed = Number(process.env.FUZZ_SEED ?? 15);
  return { numRuns: Number.isSafeInteger(runs) && runs > 0 ? runs : defaultRuns, seed };
}

/** A user-facing failure: one line, no stack frames, no "internal error". */
export function expectOneLineError(text: string): void {
  const trimmed = text.replace(/\n$/, '');
  expect(trimmed.length).toBeGreaterThan(0);
  expect(trimmed).not.toContain('\n');
  expect(trimmed).not.toMatch(/\n\s+at |^\s+at .+:\d+:\d+\)?$|internal error/m);
}

/** Files a failed command left behind in `dir` (outputs and temporary files). */
export function leftovers(dir: string, inputs: readonly string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => !inputs.includes(f));
}

/** Random edits of a text: cut, repeat, insert hostile characters, truncate. */
export const textMutation = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), len: fc.nat({ max: 400 }) }),
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), len: fc.nat({ max: 200 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.constantFrom(
        '"',
        '{',
        '}',
        '[',
        ']',
        ',',
        ':',
        '\\',
        '\n',
        '\ud800',
        'null',
        '-1e999',
        '{"role":7}',
      ),
    ),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);
export type TextMutation = typeof textMutation extends fc.Arbitrary<infer T> ? T : never;

export function applyTextMutation(text: string, m: TextMutation): string {
  const at = text.length === 0 ? 0 : m.at % text.length;
  switch (m.kind) {
    case 'cut':
      return text.slice(0, at) + text.slice(at + m.len);
    case 'repeat':
      return text.slice(0, at + m.len) + text.slice(at);
    case 'insert':
      return text.slice(0, at) + m.text + text.slice(at);
    case 'truncate':
      return text.slice(0, at);
  }
}
