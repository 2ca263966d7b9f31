import { scatterChart, type ScatterPoint } from './charts/scatter-chart.js';
import { PRICES, PRIMARY_PRICE } from '../replay/prices.js';
import type { RetentionPolicy } from '../replay/types.js';
import type { CorpusSession, ImportFailure } from './corpus-sessions.js';
import { markWithinNoise, withinNoise } from './how-sure-section.js';
import { ResamplePlans } from './paired-bootstrap.js';
import { verdicts } from './retention-choice.js';
import {
  cacheSplitOf,
  costOf,
  dominators,
  firedSessions,
  isAdmissible,
  okSessions,
  recallOf,
  summaryCallsPer10,
  windowLimits,
  totalTokensOf,
  verbatimRecallOf,
  type PolicyRun,
} from './retention-runs.js';
import type { BenchSection } from './types.js';

export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
export const usd = (x: number) => `$${x.toFixed(2)}`;
const k = (w: number) => `${w / 1000}k`;

/** The policies, the price table and the cost model's assumptions. */
export function policiesSection(policies: readonly RetentionPolicy[]): BenchSection {
  return {
    title: 'Policies compared',
    headers: ['policy', 'source', 'rule'],
    rows: policies.map((p) => [p.name, p.source, p.description]),
    notes: [
      'library = the real npm package runs (ai, @langchain/core, langchain); reimplemented = a small documented function written from the published constants (dev/replay/policies/); compactor = projectRequest with the named options.',
      'Evidence metric (dev/replay/evidence.ts): a tool result is needed at a turn when the assistant message uses a path, camelCase/snake_case identifier (≥ 6 chars), whole code line or error line that only tool output had shown, or re-runs the same read/search. Recall = needed results present verbatim, plus needed results that were compacted away whose summary still carries the fact the agent used (dev/replay/score.ts).',
      `Prices ($ per million tokens, as of August 2025, from each provider's pricing page; dev/replay/prices.ts): ${PRICES.map((p) => `${p.provider} ${p.model}: input ${p.input}, cached ${p.cachedInput}, cache write ${p.cacheWrite}, output ${p.output}`).join('; ')}.`,
      `Cost model (dev/replay/cost.ts): each request reads from the cache the longest message prefix it shares with the previous request and writes the rest (Anthropic charges 1.25× input for writes; OpenAI and Gemini none); requests under the provider's minimum are uncached. Replays carry no reliable timing, so the cache is ASSUMED to survive between consecutive turns. Summary calls are priced as uncached input plus output; the agent's own output (the recorded assistant messages) is included and is the same under every policy. The frontier uses ${PRIMARY_PRICE.provider} prices.`,
    ],
  };
}

/** The sessions, which half each is in, and files that failed to import. */
export function corpusSection(
  sessions: readonly CorpusSession[],
  tuning: ReadonlySet<string>,
  failures: readonly ImportFailure[],
  corpusDir: string,
): BenchSection {
  return {
    title: 'Corpus and the fixed tuning/check split',
    headers: ['session', 'kind', 'messages', 'half'],
    rows: sessions.map((s) => [
      s.name,
      s.synthetic ? 'SYNTHETIC' : 'real',
      s.messages.length,
      tuning.has(s.name) ? 'tuning' : 'check',
    ]),
    notes: [
      `Corpus: ${corpusDir} (set with --corpus DIR or COMPACTOR_CORPUS). ${sessions.filter((s) => !s.synthetic).length} real sessions and ${sessions.filter((s) => s.synthetic).length} synthetic sessions (dev/bench/synthetic-agent-session.ts: long ones, and ones whose every result is a 2,000–8,000-token file read), split by a hash of the session name, real and synthetic separately.`,
      ...failures.map((f) => `Could not import ${f.file}: ${f.error}`),
    ],
  };
}

function frontierLabel(r: PolicyRun, runs: readonly PolicyRun[], plans: ResamplePlans): string {
  if (r.failures.length > 0) return `no (failed on ${r.failures.length})`;
  if (r.totals.invalidRequests > 0) return 'no (invalid requests)';
  if (r.totals.taskLostTurns > 0) return 'no (task lost)';
  const by = dominators(r, runs, true);
  const named = markWithinNoise(by.slice(0, 3), r, runs, plans);
  return by.length === 0 ? 'yes' : `dominated by ${named.join(', ')}${by.length > 3 ? ', …' : ''}`;
}

/** The full table of one window and one half, with the recall-vs-cost chart. */
export function windowTable(
  runs: readonly PolicyRun[],
  window: number,
  half: string,
  sessions: number,
  plans: ResamplePlans = new ResamplePlans(),
): BenchSection {
  const points: ScatterPoint[] = runs.map((r) => ({
    name: r.policy.name,
    x: costOf(r),
    y: recallOf(r.totals),
    admissible: isAdmissible(r),
  }));
  return {
    title: `Retention and cost, ${half} half, window ${k(window)} (${sessions} sessions)`,
    headers: [
      'policy',
      'recall',
      'verbatim',
      'summary recall',
      'tokens',
      'cache read',
      'cache write',
      ...PRICES.map((p) => `$ ${p.provider}`),
      '$/session (anthropic)',
      'summary calls',
      'summary calls / 10 turns',
      'fired on',
      'frontier',
    ],
    rows: runs.map((r) => {
      const c = cacheSplitOf(r);
      const n = Math.max(1, okSessions(r));
      return [
        r.policy.name,
        pct(recallOf(r.totals)),
        pct(verbatimRecallOf(r.totals)),
        r.totals.compactedNeeded === 0 ? '—' : `${r.totals.summaryRecalled}/${r.totals.compactedNeeded}`,
        totalTokensOf(r.totals),
        c.read,
        c.written,
        ...r.dollars.map(usd),
        `$${(costOf(r) / n).toFixed(3)}`,
        r.totals.summaryCalls,
        summaryCallsPer10(r.totals).toFixed(2),
        `${firedSessions(r)}/${okSessions(r)}`,
        frontierLabel(r, runs, plans),
      ];
    }),
    notes: [
      `Window ${window.toLocaleString('en-US')}, output reserve ${(windowLimits(window).reservedOutput ?? 0).toLocaleString('en-US')}. Compactor settings replay through the session API (a createCompactorSession turn per step, offline summarizer); the other policies build each request with their own rule and compact with the same session's compaction pass. recall = verbatim + summary-carried; summary recall = compacted needed results whose fact the offline summarizer's summary kept / compacted needed results (no real model offline). frontier = admissible (ran everywhere, 0 invalid, 0 task lost) and not dominated on recall vs ${PRIMARY_PRICE.provider} dollars; "(within noise)" after a dominating policy means its lead on both recall and cost lies inside the 95 % intervals of the "How sure" comparison (sessions resampled), so the domination may not be real.`,
    ],
    charts: [
      {
        file: `recall-vs-cost-${half}-${k(window)}.svg`,
        title: `Recall vs cost, ${half} half, ${k(window)}`,
        svg: scatterChart(points, {
          title: `Recall vs ${PRIMARY_PRICE.provider} dollars (${half} half, ${sessions} sessions, ${k(window)} window)`,
          x: `dollars over all sessions (${PRIMARY_PRICE.model}, prompt cache modelled)`,
          y: 'recall of needed evidence',
        }),
      },
    ],
  };
}

/** How often each policy changed a request: sessions fired on, per window. */
export function firingSection(byWindow: ReadonlyMap<number, PolicyRun[]>, sessions: number): BenchSection {
  const windows = [...byWindow.keys()];
  const first = byWindow.get(windows[0]) ?? [];
  const firedCounts = (name: string) =>
    windows.map((w) => {
      const r = (byWindow.get(w) ?? []).find((x) => x.policy.name === name);
      return r ? firedSessions(r) : 0;
    });
  const bestShare = (name: string) => Math.max(...firedCounts(name)) / Math.max(1, sessions);
  // The peers' rules and Compactor's clearing settings must act somewhere;
  // no-clearing never acts and the defaults keep tool results by design.
  const peers = first.filter((r) => r.policy.source === 'library' || r.policy.source === 'reimplemented');
  const short = peers.filter((r) => bestShare(r.policy.name) < 1 / 3).map((r) => r.policy.name);
  return {
    title: 'How often each policy fired (sessions where it changed at least one request)',
    headers: ['policy', ...windows.map(k), 'best share', '≥ 1/3 somewhere'],
    rows: first.map((r0) => {
      const counts = firedCounts(r0.policy.name);
      const best = bestShare(r0.policy.name);
      const isPeer = peers.includes(r0);
      return [
        r0.policy.name,
        ...counts.map((c) => `${c}/${sessions}`),
        pct(best),
        isPeer ? (best >= 1 / 3 ? 'yes' : 'NO') : '—',
      ];
    }),
    notes: [
      'Counted over all sessions (both halves, real and synthetic). Fired = cleared, masked or trimmed something before compaction; compaction itself is not counted. "no-clearing" never changes a request, and Compactor\'s defaults keep tool results until compaction by design, so both show 0; the last column applies to the peers (— for the others).',
      short.length === 0
        ? `Every peer policy (${peers.length}) acts on at least a third of the sessions at some window: yes.`
        : `Every peer policy acts on at least a third of the sessions at some window: NO — ${short.join(', ')} fall short.`,
    ],
  };
}

/** The default chosen on the tuning half and how it and VT Code's defaults do on both halves. */
export function choiceSection(
  scores: Array<{ name: string; score: number; meanRecall: number }>,
  chosen: string,
  tuning: ReadonlyMap<number, PolicyRun[]>,
  check: ReadonlyMap<number, PolicyRun[]>,
  plans: ResamplePlans = new ResamplePlans(),
): BenchSection {
  const rows: Array<Array<string | number>> = [];
  for (const name of [...new Set([chosen, 'compactor', 'compactor-vtcode'])])
    for (const [half, byWindow] of [
      ['tuning', tuning],
      ['check', check],
    ] as const)
      for (const v of verdicts(byWindow, name)) {
        const runs = byWindow.get(v.window) ?? [];
        const run = runs.find((r) => r.policy.name === name)!;
        const none = runs.find((r) => r.policy.name === 'no-clearing')!;
        rows.push([
          name,
          half,
          k(v.window),
          v.onFrontier ? 'yes' : `no (${markWithinNoise(v.dominatedBy, run, runs, plans).join(', ')})`,
          v.beatsNoClearing ? `yes${withinNoise(run, none, plans) ? ' (within noise)' : ''}` : 'no',
        ]);
      }
  return {
    title: 'Defaults chosen on the tuning half, checked on the check half',
    headers: ['setting', 'half', 'window', 'on admissible frontier', 'strictly better than no clearing'],
    rows,
    notes: [
      `Tuning scores (windows on the frontier + wins over no clearing at 32k/64k; tie: mean recall): ${scores.map((s) => `${s.name} ${s.score} (${pct(s.meanRecall)})`).join('; ')}.`,
      '"(within noise)": the recall and cost differences behind that comparison both lie inside their 95 % intervals (see the "How sure" tables), so it may not hold on other sessions.',
      `Chosen: ${chosen}${chosen === 'compactor' ? ' (the library defaults)' : ' — NOT the library defaults'}. "compactor" is the library's defaults (preset compactor); "compactor-vtcode" is the seed's VT Code defaults (--preset vtcode).`,
    ],
  };
}

/** The measured effect of each Compactor setting against VT Code's defaults (preset vtcode), per window, all sessions. */
export function cacheOptionsSection(byWindow: ReadonlyMap<number, PolicyRun[]>): BenchSection {
  const rows: Array<Array<string | number>> = [];
  for (const [w, runs] of byWindow) {
    const base = runs.find((r) => r.policy.name === 'compactor-vtcode');
    if (!base) continue;
    for (const r of runs.filter((x) => x.policy.source === 'compactor' && x !== base)) {
      const dc = costOf(r) - costOf(base);
      const dr = recallOf(r.totals) - recallOf(base.totals);
      const readShare = (x: PolicyRun) => {
        const c = cacheSplitOf(x);
        return c.read / Math.max(1, c.read + c.written + c.uncached);
      };
      rows.push([
        k(w),
        r.policy.name,
        `${dc >= 0 ? '+' : ''}${((dc / Math.max(1e-9, costOf(base))) * 100).toFixed(1)}%`,
        `${dr >= 0 ? '+' : ''}${(dr * 100).toFixed(1)} pt`,
        `${pct(readShare(base))} → ${pct(readShare(r))}`,
        `${base.totals.summaryCalls} → ${r.totals.summaryCalls}`,
      ]);
    }
  }
  return {
    title:
      'Compactor settings and cache-aware options: measured effect against the seed defaults (preset vtcode, all sessions)',
    headers: ['window', 'setting', 'Δ $ (anthropic)', 'Δ recall', 'cache-read share', 'summary calls'],
    rows,
  };
}

/** Dollars per session at one window for a few policies (the per-session view of the cost model). */
export function perSessionDollars(
  runs: readonly PolicyRun[],
  names: readonly string[],
  sessions: readonly CorpusSession[],
  window: number,
): BenchSection {
  const chosen = names
    .map((n) => runs.find((r) => r.policy.name === n))
    .filter((r): r is PolicyRun => r !== undefined);
  return {
    title: `Dollars per session (${PRIMARY_PRICE.provider}), window ${k(window)}`,
    headers: ['session', ...chosen.map((r) => r.policy.name)],
    rows: sessions.map((s, i) => [
      s.name,
      ...chosen.map((r) => {
        const x = r.perSession[i];
        return x.ok ? usd(x.dollars[PRICES.indexOf(PRIMARY_PRICE)]) : 'failed';
      }),
    ]),
  };
}

/** Policies that failed on some session, with the error (the run went on). */
export function failuresSection(byWindow: ReadonlyMap<number, PolicyRun[]>): BenchSection | null {
  const rows: Array<Array<string | number>> = [];
  for (const [w, runs] of byWindow)
    for (const r of runs) for (const f of r.failures) rows.push([k(w), r.policy.name, f.session, f.error]);
  return rows.length === 0
    ? null
    : {
        title: 'Policy failures (reported per session; the run went on)',
        headers: ['window', 'policy', 'session', 'error'],
        rows,
      };
}

/**
 * The headline table: per window, recall, tokens and dollars of every policy on one half, a
 * star when it is on the admissible frontier (what the README's benchmark section shows).
 */
export function headlineTable(
  byWindow: ReadonlyMap<number, PolicyRun[]>,
  half: string,
  sessions: number,
): BenchSection {
  const windows = [...byWindow.keys()];
  const first = byWindow.get(windows[0]) ?? [];
  const compactor = first.filter((r) => r.policy.source === 'compactor');
  const shown = [
    ...first.filter((r) => r.policy.source !== 'compactor'),
    ...['compactor', 'compactor-vtcode'].flatMap((n) => compactor.filter((r) => r.policy.name === n)),
  ];
  return {
    title: `Headline: ${half} half, every window (${sessions} sessions; recall, tokens, ${PRIMARY_PRICE.provider} dollars, summary calls per 10 turns; * = on the admissible frontier)`,
    headers: ['policy', ...windows.map(k)],
    rows: shown.map((r0) => [
      r0.policy.name,
      ...windows.map((w) => {
        const runs = byWindow.get(w) ?? [];
        const r = runs.find((x) => x.policy.name === r0.policy.name);
        if (!r) return '—';
        const star = isAdmissible(r) && dominators(r, runs, true).length === 0 ? ' *' : '';
        const admissible = isAdmissible(r) ? '' : ' (inadmissible)';
        return `${pct(recallOf(r.totals))}, ${(totalTokensOf(r.totals) / 1e6).toFixed(2)}M, ${usd(costOf(r))}, ${summaryCallsPer10(r.totals).toFixed(2)}/10${star}${admissible}`;
      }),
    ]),
    notes: [
      'tokens = request tokens plus summary-call input, in millions; the frontier is computed among every policy and setting of that window.',
    ],
  };
}
