import { runCli as run, type CliRun } from './cli.js';

/** Runs the CLI in-process with captured streams, in `cwd` with an empty environment. */
export function runCli(args: string[], cwd: string): Promise<CliRun> {
  return run(args, { cwd });
}
