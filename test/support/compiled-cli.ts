import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The compiled CLI (`npm run build`); child processes start in ~0.2 s instead of tsx's seconds. */
export const COMPILED_CLI = join(import.meta.dirname, '../../dist/src/bin/compactor.js');

/** Fails clearly when the build is missing (npm test builds first). */
export function requireBuild(): void {
  if (!existsSync(COMPILED_CLI)) throw new Error(`${COMPILED_CLI} is missing: run npm run build first`);
}

/** One running CLI child, with its output collected as it arrives. */
export interface CliChild {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  err: () => string;
  /** Resolves when stderr (or stdout) contains `pattern` — no timers, just output. */
  waitFor(pattern: RegExp, stream?: 'err' | 'out'): Promise<void>;
  /** Resolves with the exit code (or the signal name) and the final output. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>;
}

/** CLI children not yet closed, so a test that fails half-way can still end them. */
const running = new Set<ChildProcessWithoutNullStreams>();

/**
 * SIGKILLs every CLI child this file started that is still running and waits until each has
 * closed. Call it after each test: a server, a lock or a held provider request left by a test
 * that failed half-way would otherwise spill into the next one.
 */
export async function stopRunningClis(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

const SERVING = /compactor: serving on (http:\/\/\S+)\n/;

/** `compactor serve --port 0 …args` as a process; resolves once it listens, with its URL. */
export async function startServeCli(
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ cli: CliChild; url: string }> {
  const cli = startCli(['serve', '--port', '0', ...args], opts);
  await cli.waitFor(SERVING);
  return { cli, url: SERVING.exec(cli.err())![1] };
}

/** Starts the compiled CLI with `args` in `cwd` (environment: only PATH unless given). */
export function startCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): CliChild {
  requireBuild();
  const child = spawn(process.execPath, [COMPILED_CLI, ...args], {
    cwd: opts.cwd,
    env: opts.env ?? { PATH: process.env.PATH },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('close', () => running.delete(child));
  child.stdin.end();
  let out = '';
  let err = '';
  const waiters: Array<{ re: RegExp; stream: 'err' | 'out'; resolve: () => void }> = [];
  const check = () => {
    for (const w of [...waiters])
      if (w.re.test(w.stream === 'err' ? err : out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  child.stdout.on('data', (d: Buffer) => ((out += d.toString()), check()));
  child.stderr.on('data', (d: Buffer) => ((err += d.toString()), check()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, out, err }));
    },
  );
  return {
    child,
    out: () => out,
    err: () => err,
    waitFor: (re, stream = 'err') =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ re, stream, resolve });
        check();
        void done.then(() => {
          if (waiters.some((w) => w.re === re))
            reject(new Error(`exited before ${re} appeared; stderr: ${err.slice(0, 400)}`));
        });
      }),
    done,
  };
}

/** Runs the compiled CLI to completion. */
export function runCompiledCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  return startCli(args, opts).done;
}
