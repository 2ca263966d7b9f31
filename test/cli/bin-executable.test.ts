import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { COMPILED_CLI, requireBuild } from '../support/compiled-cli.js';
import { VERSION } from '../../src/version.js';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../..');

// npm test builds dist/ first, so this checks what `npm run build` leaves behind.
describe('the built bin', () => {
  it('is executable after npm run build', () => {
    requireBuild();
    expect(statSync(COMPILED_CLI).mode & 0o111).toBe(0o111);
  });

  it('runs as `npx compactor --version` in the repository', async () => {
    requireBuild();
    const { stdout } = await run('npx', ['--no-install', 'compactor', '--version'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect(stdout.trim()).toContain(VERSION);
  });
});
