import { parseArgs } from 'node:util';
import { freeEncoders } from '../../src/estimate/counters.js';
import { sessionCorpusDir } from './corpus.js';
import { suites } from './suites.js';
import { renderTable } from './table.js';
import type { BenchContext, BenchSection } from './types.js';

/**
 * `npm run bench [-- --only a,b] [--quick] [--report DIR]`: runs the benchmark suites and
 * prints one table per section. Not part of `npm test`; numbers are ratios against
 * baselines measured in the same run.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
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
  if (values.help) {
    process.stdout.write(
      `npm run bench -- [--only ${suites.map((s) => s.name).join(',')}] [--quick] [--report DIR] [--corpus DIR] [--windows 32000,64000] [--synthetic N]\n` +
        `  --corpus DIR     session corpus (default $COMPACTOR_CORPUS, else ../shared/data/sessions/raw beside the repo)\n` +
        `  --windows LIST   retention windows in tokens (default 32k,64k,128k,200k; --quick: 32k,128k)\n` +
        `  --synthetic N    synthetic long sessions added to the corpus (default 20; --quick: 2)\n`,
    );
    return 0;
  }
  const only = values.only ? new Set(values.only.split(',')) : null;
  const unknown = only ? [...only].filter((n) => !suites.some((s) => s.name === n)) : [];
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown suite(s): ${unknown.join(', ')}\n`);
    return 2;
  }
  const windows = values.windows?.split(',').map(Number);
  if (windows && !windows.every((w) => Number.isInteger(w) && w > 8_000)) {
    process.stderr.write(
      `bench: --windows: expected token counts above 8000 separated by commas, got ${values.windows}\n`,
    );
    return 2;
  }
  const synthetic = values.synthetic === undefined ? undefined : Number(values.synthetic);
  if (synthetic !== undefined && !(Number.isInteger(synthetic) && synthetic >= 0)) {
    process.stderr.write(`bench: --synthetic: expected a whole number ≥ 0, got ${values.synthetic}\n`);
    return 2;
  }
  let corpusDir: string | null;
  try {
    corpusDir = sessionCorpusDir(values.corpus);
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    return 2;
  }
  const ctx: BenchContext = {
    quick: Boolean(values.quick),
    corpusDir,
    windows,
    synthetic,
    log: (line) => process.stderr.write(`${line}\n`),
  };
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  const results: Array<{ suite: string; sections: BenchSection[] }> = [];
  for (const suite of suites) {
    if (only && !only.has(suite.name)) continue;
    ctx.log(`bench: running ${suite.name}… (${elapsed()} since start)`);
    const sections = await suite.run(ctx);
    ctx.log(`bench: ${suite.name} done (${elapsed()} since start)`);
    results.push({ suite: suite.name, sections });
    for (const s of sections) {
      process.stdout.write(`\n## ${s.title}\n\n${renderTable(s.headers, s.rows)}\n`);
      for (const n of s.notes ?? []) process.stdout.write(`  ${n}\n`);
    }
  }
  if (values.report) {
    const { writeReport } = await import('./report.js');
    await writeReport(values.report, results, ctx);
  }
  freeEncoders();
  return 0;
}

process.exitCode = await main();
