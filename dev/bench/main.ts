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
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      `npm run bench -- [--only ${suites.map((s) => s.name).join(',')}] [--quick] [--report DIR]\n`,
    );
    return 0;
  }
  const only = values.only ? new Set(values.only.split(',')) : null;
  const unknown = only ? [...only].filter((n) => !suites.some((s) => s.name === n)) : [];
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown suite(s): ${unknown.join(', ')}\n`);
    return 2;
  }
  const ctx: BenchContext = {
    quick: Boolean(values.quick),
    corpusDir: sessionCorpusDir(),
    log: (line) => process.stderr.write(`${line}\n`),
  };
  const results: Array<{ suite: string; sections: BenchSection[] }> = [];
  for (const suite of suites) {
    if (only && !only.has(suite.name)) continue;
    ctx.log(`bench: running ${suite.name}…`);
    const sections = await suite.run(ctx);
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
