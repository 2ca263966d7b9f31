import { Writable } from 'node:stream';
import { main } from '../../../src/cli/main.js';

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

/** Runs the CLI in-process with captured streams. */
export async function runCli(
  args: string[],
  cwd: string,
): Promise<{ code: number; out: string; err: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await main(args, { stdout, stderr, cwd, env: {} });
  return { code, out: stdout.text(), err: stderr.text() };
}
