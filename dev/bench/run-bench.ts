import { parseArgs } from 'node:util';
import { z } from 'zod';
import { sessionCorpusDir } from './corpus.js';
import { retentionInChildProcess } from './retention-process.js';
import { suites } from './suites.js';
import { renderTable } from './table.js';
import type { BenchContext, BenchSection } from './types.js';

/** Where the bench writes and which environment it reads (the process's, or a test's). */
export interface BenchIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

const HELP =
  `npm run bench -- [--only ${suites.map((s) => s.name).join(',')}] [--quick] [--report DIR] [--corpus DIR] [--windows 32000,64000] [--synthetic N]\n` +
  `  --corpus DIR     session corpus (default $COMPACTOR_CORPUS, else ../shared/data/sessions/raw beside the repo)\n` +
  `  --windows LIST   retention windows in tokens (default 8k,16k,32k,64k,128k,200k; --quick: 32k,128k)\n` +
  `  --synthetic N    synthetic long sessions added to the corpus (default 12, plus 20 large-read ones, at most N; --quick: 2 and 2)\n`;

const suiteNames = suites.map((s) => s.name);
const MIN_WINDOW = 4_000;
const FlagsSchema = z.object({
  only: z
    .string()
    .transform((v) => v.split(','))
    .refine((names) => names.every((n) => suiteNames.includes(n)), {
      message: `unknown suite; expected some of ${suiteNames.join(', ')}`,
    })
    .optional(),
  windows: z
    .string()
    .transform((v) => v.split(',').map(Number))
    // The smallest window of the default sweep (8k) must be accepted; below 4k no prompt budget is left.
    .refine((ws) => ws.every((w) => Number.isInteger(w) && w >= MIN_WINDOW), {
      message: `expected token counts of at least ${MIN_WINDOW} separated by commas`,
    })
    .optional(),
  synthetic: z
    .string()
    .transform(Number)
    .refine((n) => Number.isInteger(n) && n >= 0, { message: 'expected a whole number ≥ 0' })
    .optional(),
});

/** The run's options from the command line, or the one-line error that stops it. */
function parseBenchArgs(
  argv: string[],
  env: NodeJS.ProcessEnv,
):
  | { help: true }
  | { help: false; error: string }
  | {
      help: false;
      error?: undefined;
      only: Set<string> | null;
      report?: string;
      ctx: Omit<BenchContext, 'log'>;
    } {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean' },
      report: { type: 'string' },
      corpus: { type: 'string' },
      windows: { type: 'string' },
      synthetic: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return { help: true };
  const flags = FlagsSchema.safeParse(values);
  if (!flags.success) {
    const issue = flags.error.issues[0];
    return { help: false, error: `--${issue.path.join('.')}: ${issue.message}` };
  }
  try {
    const corpusDir = sessionCorpusDir(values.corpus, env);
    return {
      help: false,
      only: flags.data.only ? new Set(flags.data.only) : null,
      report: values.report,
      ctx: {
        quick: Boolean(values.quick),
        corpusDir,
        windows: flags.data.windows,
        synthetic: flags.data.synthetic,
      },
    };
  } catch (e) {
    return { help: false, error: (e as Error).message };
  }
}

/**
 * `npm run bench [-- --only a,b] [--quick] [--report DIR]`: runs the benchmark suites and
 * prints one table per section, with progress lines on stderr. Not part of `npm test`;
 * numbers are ratios against baselines measured in the same run. Returns the exit code.
 */
export async function runBench(argv: string[], io: BenchIo): Promise<number> {
  let args: ReturnType<typeof parseBenchArgs>;
  try {
    args = parseBenchArgs(argv, io.env);
  } catch (e) {
    args = { help: false, error: (e as Error).message };
  }
  if (args.help) {
    io.stdout(HELP);
    return 0;
  }
  if (args.error !== undefined) {
    io.stderr(`bench: ${args.error}\n`);
    return 2;
  }
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  const ctx: BenchContext = { ...args.ctx, log: (line) => io.stderr(`${line}\n`) };
  const chosen = suites.filter((s) => !args.only || args.only.has(s.name));
  // The retention pilot measures no time: beside other suites it runs in its own process.
  const aside =
    chosen.length > 1 && chosen.some((s) => s.name === 'retention')
      ? settle(retentionInChildProcess(ctx))
      : null;
  if (aside) ctx.log(`bench: running retention in its own process beside the other suites…`);
  const results = new Map<string, BenchSection[]>();
  const print = (sections: BenchSection[]) => {
    for (const s of sections) {
      io.stdout(`\n## ${s.title}\n\n${renderTable(s.headers, s.rows)}\n`);
      for (const n of s.notes ?? []) io.stdout(`  ${n}\n`);
    }
  };
  for (const suite of chosen) {
    if (aside && suite.name === 'retention') continue;
    ctx.log(`bench: running ${suite.name}… (${elapsed()} since start)`);
    results.set(suite.name, await suite.run(ctx));
    ctx.log(`bench: ${suite.name} done (${elapsed()} since start)`);
    print(results.get(suite.name) ?? []);
  }
  if (aside) {
    ctx.log(`bench: waiting for the retention pilot… (${elapsed()} since start)`);
    const r = await aside;
    if (!r.ok) throw r.error;
    ctx.log(`bench: retention done (${elapsed()} since start)`);
    results.set('retention', r.value);
    print(r.value);
  }
  if (args.report) {
    const { writeReport } = await import('./report.js');
    const ordered = chosen.map((suite) => ({ suite: suite.name, sections: results.get(suite.name) ?? [] }));
    await writeReport(args.report, ordered, ctx);
  }
  ctx.log(`bench: finished in ${elapsed()}`);
  return 0;
}

/** A promise's outcome without an unhandled rejection while other work runs. */
function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}
