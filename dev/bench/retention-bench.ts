import { lineChart } from './charts/line-chart.js';
import { createEstimator } from '../../src/estimate/estimator.js';
import { compactorCandidates, peerPolicies } from '../replay/policies/index.js';
import {
  loadCorpusSessions,
  splitSessions,
  syntheticLargeReadSessions,
  syntheticLongSessions,
  SYNTHETIC_READ_SESSIONS,
  SYNTHETIC_SESSIONS,
  type CorpusSession,
} from './corpus-sessions.js';
import { howSureSection } from './how-sure-section.js';
import { neverWorseSection } from './never-worse-section.js';
import { ResamplePlans } from './paired-bootstrap.js';
import { chooseDefault } from './retention-choice.js';
import { recallOf, runWindow, subsetRuns, type PolicyRun } from './retention-runs.js';
import {
  cacheOptionsSection,
  choiceSection,
  corpusSection,
  failuresSection,
  firingSection,
  headlineTable,
  pct,
  perSessionDollars,
  policiesSection,
  windowTable,
} from './retention-sections.js';
import { summaryRecallSection } from './summary-recall-section.js';
import { recoverableRecallSection } from './recoverable-recall-section.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

export * from './retention-runs.js';
export type { CorpusSession } from './corpus-sessions.js';

/** The sweep's windows (every policy must fire somewhere; 8k and 16k where a few large results fill the window). */
export const SWEEP_WINDOWS = [8_000, 16_000, 32_000, 64_000, 128_000, 200_000];
/** The window of the per-session dollar table and the tokens-per-turn chart. */
export const MAIN_WINDOW = 128_000;

function tokensPerTurn(
  runs: PolicyRun[],
  sessions: readonly CorpusSession[],
  window: number,
): BenchSection | null {
  // The longest real session by request tokens without clearing (runs[0] is no-clearing).
  let best = -1;
  let most = -1;
  sessions.forEach((s, i) => {
    const r = runs[0].perSession[i];
    if (!s.synthetic && r.ok && r.result.totals.requestTokens > most)
      [best, most] = [i, r.result.totals.requestTokens];
  });
  if (best < 0) return null;
  const name = sessions[best].name;
  const series = runs.flatMap((r) => {
    const s = r.perSession[best];
    return s.ok
      ? [
          {
            name: r.policy.name,
            points: s.result.turns.map((t, i): [number, number] => [i + 1, t.projectedTokens]),
          },
        ]
      : [];
  });
  return {
    title: `Tokens per turn of the longest real session (${name}, window ${window / 1000}k)`,
    headers: ['policy', 'peak request tokens', 'summary calls', 'recall'],
    rows: runs.map((r) => {
      const s = r.perSession[best];
      if (!s.ok) return [r.policy.name, 'failed', '', s.error];
      const peak = Math.max(0, ...s.result.turns.map((t) => t.projectedTokens));
      return [r.policy.name, peak, s.result.totals.summaryCalls, pct(recallOf(s.result.totals))];
    }),
    charts: [
      {
        file: 'tokens-per-turn.svg',
        title: `Tokens per turn (${name})`,
        svg: lineChart(series, {
          title: `Request tokens per turn — ${name} (${window / 1000}k window)`,
          x: 'turn (assistant message)',
          y: 'tokens sent',
        }),
      },
    ],
  };
}

/** Retention pilot: recall, tokens and dollars per policy, 4-window sweep, tuning/check split. */
export const retentionSuite: BenchSuite = {
  name: 'retention',
  async run(ctx: BenchContext) {
    if (!ctx.corpusDir) {
      ctx.log('retention: session corpus not found (use --corpus DIR or COMPACTOR_CORPUS); skipping');
      return [];
    }
    const loaded = loadCorpusSessions(ctx.corpusDir);
    const synthetic = ctx.synthetic ?? (ctx.quick ? SYNTHETIC_SESSIONS.quick : SYNTHETIC_SESSIONS.full);
    const readsDefault = ctx.quick ? SYNTHETIC_READ_SESSIONS.quick : SYNTHETIC_READ_SESSIONS.full;
    // --synthetic N bounds both kinds (0: the real corpus alone).
    const reads = ctx.synthetic === undefined ? readsDefault : Math.min(ctx.synthetic, readsDefault);
    const sessions = [
      ...loaded.sessions,
      ...syntheticLongSessions(synthetic),
      ...syntheticLargeReadSessions(reads),
    ];
    const names = sessions.map((s) => s.name);
    const { tuning, check } = splitSessions(sessions);
    const tuningNames = new Set(tuning.map((s) => s.name));
    const idx = (half: CorpusSession[]) => half.map((s) => sessions.indexOf(s));
    const candidates = compactorCandidates();
    const policies = [...peerPolicies(), ...candidates];
    const estimator = createEstimator();
    const windows = ctx.windows ?? (ctx.quick ? [32_000, MAIN_WINDOW] : SWEEP_WINDOWS);

    const all = new Map<number, PolicyRun[]>();
    const tuningRuns = new Map<number, PolicyRun[]>();
    const checkRuns = new Map<number, PolicyRun[]>();
    for (const w of windows) {
      ctx.log(
        `bench: retention replay at ${w / 1000}k (${sessions.length} sessions, ${policies.length} policies)…`,
      );
      const runs = await runWindow(sessions, w, policies, estimator, ctx.log);
      all.set(w, runs);
      tuningRuns.set(w, subsetRuns(runs, idx(tuning), names));
      checkRuns.set(w, subsetRuns(runs, idx(check), names));
    }
    const { chosen, scores } = chooseDefault(
      tuningRuns,
      candidates.map((c) => c.name),
    );
    // One set of resample plans for the whole report: every comparison uses the same resamples.
    const plans = new ResamplePlans();
    const sections: BenchSection[] = [
      headlineTable(checkRuns, 'check', check.length),
      policiesSection(policies),
      corpusSection(sessions, tuningNames, loaded.failures, ctx.corpusDir),
      choiceSection(scores, chosen, tuningRuns, checkRuns, plans),
      neverWorseSection([
        ['tuning', tuningRuns],
        ['check', checkRuns],
      ]),
      firingSection(all, sessions.length),
    ];
    for (const [half, byWindow, n] of [
      ['check', checkRuns, check.length],
      ['tuning', tuningRuns, tuning.length],
    ] as const)
      for (const w of windows) {
        const runs = byWindow.get(w) ?? [];
        sections.push(windowTable(runs, w, half, n, plans));
        const sure = howSureSection(runs, w, half, plans);
        if (sure) sections.push(sure);
      }
    sections.push(cacheOptionsSection(all));
    sections.push(summaryRecallSection(all, sessions));
    sections.push(recoverableRecallSection(all));
    const main = all.get(MAIN_WINDOW) ?? all.get(windows[windows.length - 1]) ?? [];
    const mainWindow = all.has(MAIN_WINDOW) ? MAIN_WINDOW : windows[windows.length - 1];
    sections.push(
      perSessionDollars(
        main,
        [...new Set(['no-clearing', 'compactor', 'compactor-vtcode', chosen])],
        sessions,
        mainWindow,
      ),
    );
    const perTurn = tokensPerTurn(main, sessions, mainWindow);
    if (perTurn) sections.push(perTurn);
    const failed = failuresSection(all);
    if (failed) sections.push(failed);
    return sections;
  },
};
