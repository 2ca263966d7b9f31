import { basename } from 'node:path';
import { createEstimator, type Estimator } from '../../src/estimate/estimator.js';
import { readSessionFile } from '../../src/formats/index.js';
import type { Message } from '../../src/messages/message.js';
import type { Limits } from '../../src/projection/budgets.js';
import { findEvidenceNeeds, type EvidenceNeeds } from '../replay/evidence.js';
import { allPolicies } from '../replay/policies/index.js';
import { emptyTotals, replaySession, type ReplayResult, type ReplayTotals } from '../replay/replay.js';
import type { RetentionPolicy } from '../replay/types.js';
import { lineChart } from './charts/line-chart.js';
import { frontier, scatterChart, type ScatterPoint } from './charts/scatter-chart.js';
import { corpusFiles } from './corpus.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/** The window of the headline comparison and the output reserved from every window. */
export const MAIN_WINDOW = 128_000;
export const RESERVED_OUTPUT = 8_000;
/** Capacity sweep windows (SPEC §13 plus 200k). */
export const SWEEP_WINDOWS = [32_000, 64_000, 96_000, 128_000, 200_000];

/** One recorded session of the corpus with its precomputed evidence needs. */
export interface CorpusSession {
  name: string;
  messages: Message[];
  needs: EvidenceNeeds;
}

/** Every session of every importable corpus file (multi-session files give every session). */
export function loadCorpusSessions(dir: string): CorpusSession[] {
  const out: CorpusSession[] = [];
  for (const file of corpusFiles(dir)) {
    const imported = readSessionFile(file);
    imported.sessions.forEach((s, k) => {
      const name = imported.sessions.length > 1 ? `${basename(file)}#${k}` : basename(file);
      out.push({ name, messages: s.messages, needs: findEvidenceNeeds(s.messages) });
    });
  }
  return out;
}

/** Limits of one window in the pilot (no separate prompt prefix: system prompts are in the histories). */
export function windowLimits(window: number): Limits {
  return { capacity: window, reservedOutput: RESERVED_OUTPUT };
}

/** Replays of every session under one policy at one window. */
export interface PolicyRun {
  policy: RetentionPolicy;
  perSession: ReplayResult[];
  totals: ReplayTotals;
}

function sumTotals(results: readonly ReplayResult[]): ReplayTotals {
  const t = emptyTotals();
  for (const r of results) for (const k of Object.keys(t) as Array<keyof ReplayTotals>) t[k] += r.totals[k];
  return t;
}

/** Replays every session under every policy at one window. */
export async function runWindow(
  sessions: readonly CorpusSession[],
  window: number,
  policies: readonly RetentionPolicy[],
  estimator: Estimator,
): Promise<PolicyRun[]> {
  const runs: PolicyRun[] = [];
  for (const policy of policies) {
    const perSession: ReplayResult[] = [];
    for (const s of sessions)
      perSession.push(
        await replaySession(s.messages, { policy, limits: windowLimits(window), estimator, needs: s.needs }),
      );
    runs.push({ policy, perSession, totals: sumTotals(perSession) });
  }
  return runs;
}

/** Recall of needed evidence (1 when nothing was needed). */
export function recallOf(t: ReplayTotals): number {
  return t.needed === 0 ? 1 : t.present / t.needed;
}

/** Cost: request tokens plus summary-call input tokens. */
export function totalTokensOf(t: ReplayTotals): number {
  return t.requestTokens + t.summaryInputTokens;
}

/**
 * A policy whose requests an agent could actually use: protocol-valid and still carrying the
 * user's task. A request that lost the task is as unusable as an invalid one, whatever its
 * recall, so such policies are reported but cannot dominate (they are not on the frontier).
 */
export function isAdmissible(run: PolicyRun): boolean {
  return run.totals.invalidRequests === 0 && run.totals.taskLostTurns === 0;
}

/**
 * Names of the runs that dominate `run` (recall ≥ and tokens ≤, one strictly); with
 * `admissibleOnly`, only admissible runs count as dominators.
 */
export function dominators(run: PolicyRun, runs: readonly PolicyRun[], admissibleOnly = false): string[] {
  const r = recallOf(run.totals);
  const c = totalTokensOf(run.totals);
  return runs
    .filter((o) => o !== run && (!admissibleOnly || isAdmissible(o)))
    .filter((o) => {
      const or = recallOf(o.totals);
      const oc = totalTokensOf(o.totals);
      return or >= r && oc <= c && (or > r || oc < c);
    })
    .map((o) => o.policy.name);
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** One sentence: where Compactor's defaults stand, among admissible policies and among all. */
function compactorVerdict(compactor: PolicyRun, runs: readonly PolicyRun[]): string {
  const at = `recall ${pct(recallOf(compactor.totals))} at ${totalTokensOf(compactor.totals).toLocaleString('en-US')} tokens`;
  const admissible = dominators(compactor, runs, true);
  const all = dominators(compactor, runs);
  const head =
    admissible.length === 0
      ? `Compactor defaults (${at}) are on the frontier of admissible policies`
      : `Compactor defaults (${at}) are NOT on the frontier: dominated by ${admissible.join(', ')}`;
  const inadmissible = all.filter((n) => !admissible.includes(n));
  return inadmissible.length === 0
    ? `${head}.`
    : `${head}; counting policies that lose the task or break the protocol too, also dominated by ${inadmissible.join(', ')}.`;
}

/**
 * One line: each Compactor setting (source `compactor`, defaults and opt-in variants) with its
 * recall and tokens, and whether it is on the admissible frontier or who dominates it.
 */
function compactorSettingsNote(runs: readonly PolicyRun[]): string {
  const parts = runs
    .filter((r) => r.policy.source === 'compactor')
    .map((r) => {
      const at = `${pct(recallOf(r.totals))}, ${totalTokensOf(r.totals).toLocaleString('en-US')} tokens`;
      if (!isAdmissible(r)) return `${r.policy.name} (${at}) no (inadmissible)`;
      const by = dominators(r, runs, true);
      return `${r.policy.name} (${at}) ${by.length === 0 ? 'yes' : `no (dominated by ${by.join(', ')})`}`;
    });
  return `Compactor settings on the admissible frontier: ${parts.join('; ')}.`;
}

function headline(runs: PolicyRun[], window: number, sessions: number): BenchSection {
  const points: ScatterPoint[] = runs.map((r) => ({
    name: r.policy.name,
    x: totalTokensOf(r.totals),
    y: recallOf(r.totals),
    admissible: isAdmissible(r),
  }));
  const admissible = runs.filter(isAdmissible);
  const onFront = new Set(
    frontier(points.filter((_, i) => isAdmissible(runs[i]))).map((i) => admissible[i].policy.name),
  );
  const compactor = runs.find((r) => r.policy.name === 'compactor');
  const notes = [
    `${sessions} sessions, window ${window.toLocaleString('en-US')} (output reserve ${RESERVED_OUTPUT.toLocaleString('en-US')}); total tokens = Σ request tokens over all turns + summary-call input tokens. Every policy gets the same normalized history and the same compaction (offline summarizer) when its request reaches the compaction threshold.`,
    'recall = needed tool results present verbatim in the request at the turn that needed them / needed results; re-read tokens = tokens of needed results that were missing; task lost = turns whose request no longer held the first user message verbatim.',
  ];
  notes.push(
    'frontier = admissible policies (0 invalid requests and 0 task-lost turns) that no other admissible policy dominates (equal-or-better recall at equal-or-fewer tokens, one strictly).',
  );
  if (compactor) notes.push(compactorVerdict(compactor, runs), compactorSettingsNote(runs));
  return {
    title: `Retention pilot: evidence kept per token, every policy (window ${window / 1000}k)`,
    headers: [
      'policy',
      'source',
      'recall',
      'needed',
      'total tokens',
      'summary calls',
      're-read tokens',
      'invalid requests',
      'task lost',
      'frontier',
    ],
    rows: runs.map((r) => [
      r.policy.name,
      r.policy.source,
      pct(recallOf(r.totals)),
      r.totals.needed,
      totalTokensOf(r.totals),
      r.totals.summaryCalls,
      r.totals.rereadTokens,
      r.totals.invalidRequests,
      r.totals.taskLostTurns,
      !isAdmissible(r)
        ? r.totals.invalidRequests > 0
          ? 'no (invalid requests)'
          : 'no (task lost)'
        : onFront.has(r.policy.name)
          ? 'yes'
          : `dominated by ${dominators(r, runs, true).join(', ')}`,
    ]),
    notes,
    charts: [
      {
        file: 'recall-vs-tokens.svg',
        title: 'Recall of needed evidence vs total tokens',
        svg: scatterChart(points, {
          title: `Recall of needed evidence vs total tokens sent (${sessions} real sessions, ${window / 1000}k window)`,
          x: 'total tokens sent over all turns (requests + summary inputs)',
          y: 'recall of needed evidence',
        }),
      },
    ],
  };
}

function tokensPerTurn(runs: PolicyRun[], sessions: readonly CorpusSession[], window: number): BenchSection {
  // The long session: the one whose requests cost the most without clearing (runs[0] is no-clearing).
  let best = 0;
  for (let i = 1; i < sessions.length; i++)
    if (runs[0].perSession[i].totals.requestTokens > runs[0].perSession[best].totals.requestTokens) best = i;
  const name = sessions[best].name;
  const series = runs.map((r) => ({
    name: r.policy.name,
    points: r.perSession[best].turns.map((t, k): [number, number] => [k + 1, t.projectedTokens]),
  }));
  return {
    title: `Tokens per turn of one long session under each policy (${name}, window ${window / 1000}k)`,
    headers: ['policy', 'turns', 'peak request tokens', 'final request tokens', 'summary calls', 'recall'],
    rows: runs.map((r) => {
      const s = r.perSession[best];
      return [
        r.policy.name,
        s.turns.length,
        Math.max(0, ...s.turns.map((t) => t.projectedTokens)),
        s.turns.at(-1)?.projectedTokens ?? 0,
        s.totals.summaryCalls,
        pct(recallOf(s.totals)),
      ];
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

function sweepSection(window: number, runs: PolicyRun[], sessions: readonly CorpusSession[]): BenchSection {
  const rows: Array<Array<string | number>> = [];
  sessions.forEach((s, i) => {
    const counts = runs.map((r) => r.perSession[i].turns.filter((t) => t.summaryCalls > 0).length);
    if (counts.some((c) => c > 0)) rows.push([s.name, ...counts]);
  });
  rows.push(['all sessions', ...runs.map((r) => r.totals.summaryCalls)]);
  const quiet = sessions.length - (rows.length - 1);
  const compactor = runs.find((r) => r.policy.name === 'compactor');
  return {
    title: `Capacity sweep ${window / 1000}k: turns that needed a summary call, per session and policy`,
    headers: ['session', ...runs.map((r) => r.policy.name)],
    rows,
    notes: [
      `${quiet} of ${sessions.length} sessions needed no summary call under any policy at this window (omitted).`,
      `Recall at this window: ${runs.map((r) => `${r.policy.name} ${pct(recallOf(r.totals))}`).join(', ')}.`,
      compactor ? compactorVerdict(compactor, runs) : '',
      compactor ? compactorSettingsNote(runs) : '',
    ].filter((n) => n !== ''),
  };
}

function policiesSection(policies: readonly RetentionPolicy[]): BenchSection {
  return {
    title: 'Policies compared',
    headers: ['policy', 'source', 'rule'],
    rows: policies.map((p) => [p.name, p.source, p.description]),
    notes: [
      'library = the real npm package runs (ai, @langchain/core, langchain); reimplemented = a small documented function written from the published constants (dev/replay/policies/); compactor = projectRequest.',
      'Evidence metric (dev/replay/evidence.ts): a tool result is needed at a turn when the assistant message uses a path, camelCase/snake_case identifier (≥ 6 chars), whole code line or error line that only tool output had shown (not user/system messages or earlier assistant messages; newest such result), or re-runs the same read/search (same tool, same arguments).',
    ],
  };
}

/** Retention pilot and capacity sweep (issue: retention pilot and benchmark report). */
export const retentionSuite: BenchSuite = {
  name: 'retention',
  async run(ctx: BenchContext) {
    if (!ctx.corpusDir) {
      ctx.log('retention: session corpus not found; skipping');
      return [];
    }
    const sessions = loadCorpusSessions(ctx.corpusDir);
    const policies = allPolicies();
    const estimator = createEstimator();
    const windows = ctx.quick ? [32_000, MAIN_WINDOW] : SWEEP_WINDOWS;
    const sections: BenchSection[] = [policiesSection(policies)];
    const byWindow = new Map<number, PolicyRun[]>();
    for (const w of windows) {
      ctx.log(`bench: retention replay at ${w / 1000}k…`);
      byWindow.set(w, await runWindow(sessions, w, policies, estimator));
    }
    const main = byWindow.get(MAIN_WINDOW) ?? [];
    sections.push(headline(main, MAIN_WINDOW, sessions.length));
    sections.push(tokensPerTurn(main, sessions, MAIN_WINDOW));
    for (const w of windows) sections.push(sweepSection(w, byWindow.get(w) ?? [], sessions));
    return sections;
  },
};
