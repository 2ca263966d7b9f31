import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { corpusFiles } from '#dev/bench/corpus.js';
import { rawDir } from '#support/paths.js';

/** Git's blob id of a file's bytes (what `git hash-object FILE` prints). */
function gitBlobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** Rows of ATTRIBUTION.md: the bundled file (its first code span) and its source blob id. */
function attributionRows(): Map<string, string> {
  const text = readFileSync(join(rawDir, '..', 'ATTRIBUTION.md'), 'utf8');
  const rows = new Map<string, string>();
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const file = /^`([^`]+)`/.exec(cells[1] ?? '')?.[1];
    const blob = /^`([0-9a-f]{40})`$/.exec(cells[4] ?? '')?.[1];
    if (file && blob) rows.set(file, blob);
  }
  return rows;
}

describe('the real sessions bundled for the tests (D2)', () => {
  const rows = attributionRows();
  const files = corpusFiles(rawDir).map((f) => relative(rawDir, f));

  it('D2: every bundled session file is listed in ATTRIBUTION.md, and every listed file is bundled', () => {
    expect(files.length).toBeGreaterThanOrEqual(18);
    expect([...rows.keys()].sort()).toEqual([...files].sort());
  });

  it.each(files)('D2: %s is byte-identical to its source blob', (file) => {
    expect(gitBlobId(readFileSync(join(rawDir, file)))).toBe(rows.get(file));
  });
});
