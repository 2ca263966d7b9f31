import { describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { COMPILED_CLI, requireBuild } from '#support/compiled-cli.js';
import { VERSION } from '#src/version.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../..');

// npm test builds dist/ first, so this checks what `npm run build` leaves behind.
describe('the built bin', () => {
  it('is executable after npm run build', () => {
    requireBuild();
    expect(statSync(COMPILED_CLI).mode & 0o111).toBe(0o111);
  });

  // What `npx compactor` does once it has found the bin: execute the file itself (no `node` in
  // front), which fails with "Permission denied" when the build leaves it 0644. Running npx here
  // would make npm install and rebuild the package under the running suite.
  it('runs as an executable: compactor --version', async () => {
    requireBuild();
    const { stdout } = await run(COMPILED_CLI, ['--version'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect(stdout.trim()).toContain(VERSION);
  });
});
