import { parseArgs } from 'node:util';
import { createEstimator } from '../../src/estimate/estimator.js';
import { freeEncoders } from '../../src/estimate/counters.js';
import { z } from 'zod';
import { CLEARING, COMPACTION } from '../../src/projection/index.js';
import type { CompactorSetting } from '../replay/types.js';
import { compactorVariant, noClearingPolicy } from '../replay/policies/index.js';
import {
  loadCorpusSessions,
  splitSessions,
  syntheticLongSessions,
  SYNTHETIC_SESSIONS,
} from './corpus-sessions.js';
import { sessionCorpusDir } from './corpus.js';
import {
  costOf,
  recallOf,
  runWindow,
  strictlyBetter,
  totalTokensOf,
  type PolicyRun,
} from './retention-runs.js';
import { renderTable } from './table.js';

/**
 * `npm run bench:tune -- --window 32000 --half tuning --variant 'waitRatio=0.25' …`:
 * replays one half of the retention corpus at one window under "no clearing" and the given
 * Compactor settings only, for choosing defaults without the whole pilot (the split is the
 * pilot's). A variant is `key=value` pairs of clearing and compaction settings, joined by commas (each runs
 * through the session API); `waitByCost=true` drops the wait where the expected
 * cost says it cannot pay. `--per-session` lists the
 * sessions whose dollars differ; `--digits 4` prints dollars to a hundredth of a cent;
 * `--corpus DIR` replays sessions the defaults were not tuned on (split the same way).
 */
function parseVariant(text: string): CompactorSetting {
  const raw: Record<string, unknown> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const [key, value] = pair.split('=');
    raw[key] =
      value === 'true' ? true : value === 'false' ? false : /^[\d.]+$/.test(value) ? Number(value) : value;
  }
  return z
    .strictObject({ ...CLEARING.schema.shape, ...COMPACTION.schema.shape })
    .partial()
    .parse(raw);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      window: { type: 'string', default: '32000' },
      half: { type: 'string', default: 'tuning' },
      synthetic: { type: 'string', default: String(SYNTHETIC_SESSIONS.full) },
      variant: { type: 'string', multiple: true, default: [] },
      'per-session': { type: 'boolean', default: false },
      digits: { type: 'string', default: '2' },
      corpus: { type: 'string' },
    },
    strict: true,
  });
  const dir = sessionCorpusDir(values.corpus);
  const sessions = [...loadCorpusSessions(dir).sessions, ...syntheticLongSessions(Number(values.synthetic))];
  const halves = splitSessions(sessions);
  const half = values.half === 'check' ? halves.check : halves.tuning;
  const policies = [
    noClearingPolicy,
    ...values.variant.map((v) => compactorVariant(v || 'defaults', parseVariant(v), v)),
  ];
  const window = Number(values.window);
  const started = Date.now();
  const runs = await runWindow(half, window, policies, createEstimator());
  const none = runs[0];
  const rows = runs.map((r) => [
    r.policy.name,
    `${(recallOf(r.totals) * 100).toFixed(1)}%`,
    `$${costOf(r).toFixed(Number(values.digits))}`,
    `${(totalTokensOf(r.totals) / 1e6).toFixed(2)}M`,
    r.totals.summaryCalls,
    r.failures.length + r.totals.invalidRequests + r.totals.taskLostTurns,
    r === none ? '' : strictlyBetter(r, none) ? 'yes' : 'no',
  ]);
  process.stdout.write(
    `${values.half} half, ${half.length} sessions, window ${window / 1000}k (${Math.round((Date.now() - started) / 1000)} s)\n` +
      renderTable(
        ['policy', 'recall', '$ (Anthropic)', 'tokens', 'summary calls', 'problems', 'beats none'],
        rows,
      ) +
      '\n',
  );
  if (values['per-session']) process.stdout.write(perSessionTable(half, runs));
  freeEncoders();
}

/** Sessions where the policies' dollars differ: one row each, dollars and summary calls per policy. */
function perSessionTable(half: readonly { name: string }[], runs: readonly PolicyRun[]): string {
  const rows: string[][] = [];
  half.forEach((s, i) => {
    const cells = runs.map((r) => {
      const run = r.perSession[i];
      return run.ok ? `$${run.dollars[0].toFixed(2)} (${run.result.totals.summaryCalls})` : 'failed';
    });
    if (new Set(cells).size > 1) rows.push([s.name, ...cells]);
  });
  return renderTable(['session', ...runs.map((_, k) => String(k))], rows) + '\n';
}

void main();
