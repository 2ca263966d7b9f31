import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const bin = `${repoRoot}dist/src/bin/compactor.js`;
const tracer = `${repoRoot}test/support/trace-loads.mjs`;

/** Modules the compiled bin loads for `args`, as paths relative to the repo (node_modules/… for packages). */
function loadedModules(args: string[]): { status: number | null; modules: string[] } {
  const r = spawnSync(process.execPath, ['--import', tracer, bin, ...args], {
    encoding: 'utf8',
    cwd: repoRoot,
    timeout: 60_000,
  });
  const modules = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('LOAD file://'))
    .map((l) => fileURLToPath(l.slice('LOAD '.length)).slice(repoRoot.length));
  return { status: r.status, modules };
}

// The small modules every start-up needs: the bin, the dispatcher, the command table, errors
// and the one-line error text.
const START_UP = new Set([
  'dist/src/bin/compactor.js',
  'dist/src/cli/run-main.js',
  'dist/src/cli/main.js',
  'dist/src/cli/interrupt.js',
  'dist/src/cli/commands/index.js',
  'dist/src/version.js',
  'dist/src/core/errors.js',
  'dist/src/core/redact.js',
  'dist/src/core/text.js',
]);

describe('CLI start-up loads only what the command needs (compiled bin)', () => {
  it.each([['--version'], ['--help'], ['-h']])(
    'compactor %s imports no command module, package (zod, tiktoken, undici, xstate) or config loader',
    (flag) => {
      const r = loadedModules([flag]);
      expect(r.status).toBe(0);
      expect(r.modules.filter((m) => !START_UP.has(m))).toEqual([]);
      expect(r.modules).toContain('dist/src/cli/commands/index.js');
    },
  );

  it('compactor stats --help loads the stats command (per-command help still works lazily)', () => {
    const r = loadedModules(['stats', '--help']);
    expect(r.status).toBe(0);
    expect(r.modules).toContain('dist/src/cli/commands/stats.js');
    expect(r.modules).not.toContain('dist/src/cli/commands/run.js');
  });
});
