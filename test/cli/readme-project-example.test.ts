import { afterAll, describe, expect, it } from '@jest/globals';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCli } from '#support/cli.js';

const repoRoot = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'compactor-readme-project-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The README's `compactor project …` example line, without its trailing comment. */
function readmeProjectExample(): string[] {
  const lines = readFileSync(join(repoRoot, 'README.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('compactor project '));
  expect(lines).toHaveLength(1);
  return lines[0]
    .replace(/\s+#.*$/, '')
    .trim()
    .split(/\s+/);
}

describe("the README's project example", () => {
  it('N1: run exactly as written, it clears old tool results and writes the projection', async () => {
    const [bin, ...args] = readmeProjectExample();
    expect(bin).toBe('compactor');
    // The example names its clearing preset, so a change of the default preset cannot silently
    // turn it into a run where nothing is cleared.
    expect(args).toContain('--preset');
    // Its input path is relative to the repository; a copy at the same place keeps the
    // repository free of the example's output file.
    const input = args[1];
    mkdirSync(join(dir, dirname(input)), { recursive: true });
    copyFileSync(join(repoRoot, input), join(dir, input));
    const r = await runCli(args, { cwd: dir });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/; reached, clearing ran$/m);
    const cleared = /cleared: (\d+) result\(s\)/.exec(r.out);
    expect(Number(cleared?.[1])).toBeGreaterThan(0);
    expect(r.out).not.toMatch(/\(0% smaller\)/);
    const out = args[args.indexOf('--out') + 1];
    expect(existsSync(join(dir, out))).toBe(true);
  });
});
