import { describe, expect, it, jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const bin = `${repoRoot}dist/src/bin/compactor.js`;
const tracer = `${repoRoot}test/support/trace-loads.mjs`;

/** Modules the compiled bin loads for `args`, as paths relative to the repo (node_modules/… for packages). */
function loadedModules(args: string[], cwd = repoRoot): { status: number | null; modules: string[] } {
  const r = spawnSync(process.execPath, ['--import', tracer, bin, ...args], { encoding: 'utf8', cwd });
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
  'dist/src/cli/exit-codes.js',
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

  // A small session in a fresh directory; `encoding` selects the estimator (config file).
  const sessionDir = (encoding: 'chars' | 'o200k_base') => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-startup-'));
    writeFileSync(join(dir, 'compactor.config.json'), JSON.stringify({ encoding }));
    const messages = [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'Fix the failing test.' },
      { role: 'assistant', content: 'Looking at it.' },
    ];
    writeFileSync(
      join(dir, 's.json'),
      JSON.stringify({ format: 'compactor.canonical', version: 1, messages }),
    );
    return dir;
  };
  const packagesOf = (modules: string[]) =>
    new Set(
      modules
        .filter((m) => m.startsWith('node_modules/'))
        .map((m) =>
          m
            .split('/')
            .slice(1, m.startsWith('node_modules/@') ? 3 : 2)
            .join('/'),
        ),
    );

  it('compactor run offline with the chars estimator loads neither undici nor tiktoken nor the chart code', () => {
    const r = loadedModules(['run', 's.json'], sessionDir('chars'));
    expect(r.status).toBe(0);
    const packages = packagesOf(r.modules);
    expect(packages).toContain('xstate'); // the turn ran its machines
    // undici loads with the first provider request, tiktoken with the first encoder, charts with --chart.
    for (const p of ['undici', 'tiktoken', '@statelyai/inspect', 'ws']) expect(packages).not.toContain(p);
    expect(r.modules).not.toContain('dist/src/charts/session-chart.js');
  });

  it('compactor run with a tiktoken encoding loads tiktoken when it counts; import loads no machines or tokenizer', () => {
    const dir = sessionDir('o200k_base');
    const run = loadedModules(['run', 's.json'], dir);
    expect(run.status).toBe(0);
    expect(packagesOf(run.modules)).toContain('tiktoken');
    const imported = loadedModules(['import', 's.json', '--to', 'openai-chat'], dir);
    expect(imported.status).toBe(0);
    const packages = packagesOf(imported.modules);
    expect(packages).toContain('zod');
    for (const p of ['xstate', 'undici', 'tiktoken']) expect(packages).not.toContain(p);
  });
});
