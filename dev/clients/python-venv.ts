import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/*
 * The Python environment the client tests run the official `openai` package in: a venv in a
 * cache directory outside the repository (so nothing Python lands in the work tree), made on
 * first use and reused after. CI makes it up front (`.ci/run`).
 */

/** The `openai` release the Python client test runs. */
export const OPENAI_PYTHON_PACKAGE = 'openai==3.22.1';

/** Where the venv lives (`COMPACTOR_PYTHON_VENV` moves it). */
export function pythonVenvDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.COMPACTOR_PYTHON_VENV ?? join(homedir(), '.cache', 'context-compactor', 'py');
}

/** Whether `python3` runs on this machine at all. */
export function hasPython3(): boolean {
  const r = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' | ')}`,
    );
}

/** The venv's python with the pinned `openai` package, making the venv first when it is missing. */
export function ensureOpenAIPython(env: NodeJS.ProcessEnv = process.env): string {
  const dir = pythonVenvDir(env);
  const python = join(dir, 'bin', 'python');
  const [name, version] = OPENAI_PYTHON_PACKAGE.split('==');
  const installed = () =>
    existsSync(python) &&
    spawnSync(python, [
      '-c',
      `import ${name}, sys; sys.exit(0 if ${name}.__version__ == '${version}' else 1)`,
    ]).status === 0;
  if (installed()) return python;
  if (!existsSync(python)) run('python3', ['-m', 'venv', dir]);
  // One quick try per index: an index this machine cannot reach should not stall the install.
  run(python, [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--retries',
    '0',
    '--timeout',
    '15',
    OPENAI_PYTHON_PACKAGE,
  ]);
  if (!installed())
    throw new Error(`${OPENAI_PYTHON_PACKAGE} is not importable in ${dir} after installing it`);
  return python;
}

// `tsx dev/clients/python-venv.ts` (run by .ci/run): make the venv now, once.
if (process.argv[1]?.endsWith('python-venv.ts')) {
  if (!hasPython3()) console.log('python-venv: no python3 on this machine; the Python client test will skip');
  else console.log(`python-venv: ${ensureOpenAIPython()} has ${OPENAI_PYTHON_PACKAGE}`);
}
