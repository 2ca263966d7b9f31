import { describe, expect, it } from '@jest/globals';
import { lintMessages } from '#support/lint-probe.js';

// What the plain-comments rule says about source text sitting at `filePath`.
const plain = (filePath: string, source: string) => lintMessages('local/plain-comments', filePath, source);

describe('comments in plain words (eslint local/plain-comments)', () => {
  it('a rule id in a comment is an error naming the id, wherever it stands in the comment', async () => {
    const source = [
      '// Clearing runs when the history reaches the trigger (C1).',
      '/** L7: the continuity tail. */',
      'export const a = 1; // B3 trigger',
      '/**',
      ' * Newest batches kept (C3b); ids in ranges too: H1–H6, §14 re-injection.',
      ' */',
      'export const b = 2;',
    ].join('\n');
    expect(await plain('src/projection/probe.ts', `${source}\n`)).toEqual([
      expect.stringMatching(/^comment cites rule id "C1": say what the rule means/),
      expect.stringMatching(/rule id "L7"/),
      expect.stringMatching(/rule id "B3"/),
      expect.stringMatching(/rule id "C3b"/),
      expect.stringMatching(/rule id "H1"/),
      expect.stringMatching(/rule id "H6"/),
      expect.stringMatching(/points to "§14", which is not in this repository/),
    ]);
  });

  it('a pointer into a document outside the repository is an error', async () => {
    const source = [
      '// Betas derived from the payload (vtcode-notes §5.2).',
      '// Overflow texts (wire-formats).',
      '// The evidence budget is SPEC B4 as written.',
      '// Cache-aware clearing (issue 16); the provider kinds of the brief.',
      "// The seed's VT Code defaults; see peers.md for the others.",
      "// Input allowance (helper B's budgets).",
      'export const c = 3;',
    ].join('\n');
    const found = await plain('machines/turn/probe.ts', `${source}\n`);
    const cited = ['vtcode-notes', '§5', 'wire-formats', 'SPEC', 'B4', 'issue 16', 'the brief'];
    expect(found.map((m) => /"([^"]+)"/.exec(m)?.[1])).toEqual([
      ...cited,
      "The seed's",
      'peers.md',
      'helper B',
    ]);
    expect(found[0]).toBe(
      'comment points to "vtcode-notes", which is not in this repository: say what it means here instead.',
    );
  });

  it('words that only look like rule ids pass: V8, UTF8, P99, ES2022, HTTP/2 as H2, Amazon S3', async () => {
    const source = [
      '// V8 keeps the garbage; UTF8 text; the P99 latency; target ES2022.',
      '// HTTP/2 streams (H2) reuse the socket.',
      '// An Amazon S3 bucket holds the artifacts.',
      '// A CI run fails again on the same seed; the PRNG seed is fixed.',
      '// Markdown notes (README, ATTRIBUTION, SOURCES) are skipped. C00 and T11 are not ids.',
      'export const d = 4;',
    ].join('\n');
    expect(await plain('src/core/probe.ts', `${source}\n`)).toEqual([]);
  });

  it('applies to src/, machines/, dev/ and every file of test/, where only test names may cite ids', async () => {
    const source = '// Capacity is the smaller limit (B1).\nexport const e = 5;\n';
    for (const file of [
      'src/cli/probe.ts',
      'machines/probe.ts',
      'dev/bench/probe.ts',
      'test/support/probe.ts',
      'test/unit/probe.test.ts',
    ])
      expect(await plain(file, source)).toHaveLength(1);
    expect(await plain('dev/consumer/app/probe.mjs', source)).toHaveLength(1);
    const named = "it('B1: capacity is the smaller limit', () => {});\n";
    expect(await plain('test/unit/probe.test.ts', named)).toEqual([]);
  });
});
