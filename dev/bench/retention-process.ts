import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { BenchContext, BenchSection } from './types.js';

const CHILD = fileURLToPath(new URL('./retention-child.ts', import.meta.url));

/** The bench options a child process receives (everything of the context but the log). */
export const BenchOptionsSchema = z.object({
  quick: z.boolean(),
  corpusDir: z.string().nullable(),
  windows: z.array(z.number().int().positive()).optional(),
  synthetic: z.number().int().nonnegative().optional(),
});

const SectionsSchema = z.array(
  z.object({
    title: z.string(),
    headers: z.array(z.string()),
    rows: z.array(z.array(z.union([z.string(), z.number()]))),
    notes: z.array(z.string()).optional(),
    charts: z.array(z.object({ file: z.string(), title: z.string(), svg: z.string() })).optional(),
  }),
);

/**
 * Starts the retention pilot in its own Node process (tsx loader) and returns its sections
 * when it ends. The pilot measures no time, so it can run beside the timing suites: on two
 * cores the whole bench then takes about as long as the longer of the two halves.
 */
export function retentionInChildProcess(ctx: BenchContext): Promise<BenchSection[]> {
  const options: z.infer<typeof BenchOptionsSchema> = {
    quick: ctx.quick,
    corpusDir: ctx.corpusDir,
    windows: ctx.windows,
    synthetic: ctx.synthetic,
  };
  // Progress lines go straight to this process's stderr: the timing suites beside it keep
  // this event loop busy for minutes, and relayed lines would arrive in one late burst.
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const out: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => out.push(d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`retention pilot process ended with code ${code} (its error is printed above)`));
        return;
      }
      const last = out.join('').trim().split('\n').pop() ?? 'null';
      resolve(SectionsSchema.parse(JSON.parse(last)));
    });
  });
}
