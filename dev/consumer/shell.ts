import { spawn, spawnSync } from 'node:child_process';

/** What a finished child process said. */
export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion (no shell) and returns its output; throws with the command,
 * exit status and the tail of its output when it fails, unless `allowFailure` is set.
 */
export function sh(
  command: string,
  args: readonly string[],
  opts: { cwd: string; allowFailure?: boolean; env?: NodeJS.ProcessEnv } = { cwd: process.cwd() },
): Ran {
  const r = spawnSync(command, args, {
    cwd: opts.cwd,
    encoding: 'utf8',
    env: opts.env ?? process.env,
    maxBuffer: 64 * 1024 * 1024,
  });
  const ran = { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  if (r.error) throw new Error(`${command} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0 && !opts.allowFailure) {
    const tail = `${ran.stdout}\n${ran.stderr}`.trim().split('\n').slice(-25).join('\n');
    throw new Error(`${command} ${args.join(' ')} exited ${r.status}\n${tail}`);
  }
  return ran;
}

/** Indents every line of a block of text for the report. */
export function indent(text: string, by = '    '): string {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => `${by}${l}`)
    .join('\n');
}

/** Like {@link sh} but asynchronous, so independent slow steps (tsc, npm install) overlap. */
export function shAsync(
  command: string,
  args: readonly string[],
  opts: { cwd: string; allowFailure?: boolean; env?: NodeJS.ProcessEnv },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => reject(new Error(`${command} ${args.join(' ')}: ${e.message}`)));
    child.on('close', (status) => {
      const ran = { status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
      if (status !== 0 && !opts.allowFailure) {
        const tail = `${ran.stdout}\n${ran.stderr}`.trim().split('\n').slice(-25).join('\n');
        reject(new Error(`${command} ${args.join(' ')} exited ${status}\n${tail}`));
      } else resolve(ran);
    });
  });
}
