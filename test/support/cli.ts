import { Writable } from 'node:stream';
import { main } from '#src/cli/main.js';

/** A writable that remembers what was written. */
export function sink(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return Object.assign(w, { text: () => chunks.join('') });
}

/** Result of one in-process CLI run. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in-process with captured streams (no process spawn, same code path as the bin). */
export async function runCli(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; stderrIsTTY?: boolean } = {},
): Promise<CliRun> {
  const stdout = sink();
  const stderr = sink();
  const code = await main(args, {
    stdout,
    stderr,
    cwd: opts.cwd ?? process.cwd(),
    env: opts.env ?? {},
    stderrIsTTY: opts.stderrIsTTY ?? false,
  });
  return { code, out: stdout.text(), err: stderr.text() };
}
