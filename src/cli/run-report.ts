import type {
  CompactorSession,
  SessionCompactionReport,
  SessionTurnResult,
  SummaryCacheReport,
} from '../session/index.js';
import type { InspectTarget } from './run-options.js';
import { spokenDuration } from '../providers/http-limits.js';
import { nothingToCompactLine } from '../session/index.js';
import type { Receipt } from '../summary/receipt.js';

type TurnResult = SessionTurnResult;
type CompactionReport = SessionCompactionReport;
type Failure = NonNullable<SessionCompactionReport['failure']>;

/**
 * The reports of `compactor run` and `compactor compact`: stable JSON objects (--json) and
 * short human renderings of the same fields. No message content, no keys.
 */

/** What the user is told after a successful pass. */
export const CACHE_NOTE = 'the next request may reuse less of the provider prompt cache';

/** Route facts shown in both reports. */
export interface RouteReport {
  name: string;
  kind: string;
  model: string;
  baseUrl: string | null;
  apiKeyEnv: string | null;
  /** Environment variable the base URL came from (`OPENAI_BASE_URL`); null when it did not. */
  baseUrlEnv: string | null;
  /** Compaction strategy of the route and why it was chosen. */
  strategy: string;
  strategyReason: string;
  /** The host that made a provider with a native endpoint summarize locally (a proxy); else null. */
  offNativeHost: string | null;
  /** Provider time limits: per request, retries, all attempts of one call (null offline). */
  http: { timeoutMs: number; retries: number; retryBudgetMs: number } | null;
}

/** Where the input came from and where results went. */
export interface IoReport {
  file: string;
  format: string;
  session: string;
  out: string | null;
  outFormat: string | null;
  sessionDir: string | null;
  /** Boundary id written to the session directory, when compaction happened. */
  boundary: string | null;
  /** JSONL file or "stately", when inspecting. */
  inspect: string | null;
}

/** `compactor run --json`. */
export interface RunJsonReport extends IoReport {
  command: 'run';
  route: RouteReport;
  decision: TurnResult['decision'];
  guardReason: TurnResult['guardReason'];
  /** Strategy that ran (null when no compaction ran). */
  strategy: TurnResult['strategy'];
  /** Why NativeInline fell back to Local. */
  fallbackReason: TurnResult['fallbackReason'];
  /** Every provider request of the compaction, repair requests included. */
  summaryCalls: number;
  /** Of those, repair requests: a summary lacked template sections and was asked for again. */
  repairRequests: number;
  /** Summaries accepted without every template section, one line each. */
  warnings: string[];
  /** What the replaced span had to keep, where each item landed, tokens before and after; null without a Local compaction. */
  receipt: Receipt | null;
  /** How the summary request was built and the share of it the provider's cache served; null without one. */
  summaryCache: SummaryCacheReport | null;
  /** The template sections those summaries lack. */
  missingSections: string[];
  tokens: TurnResult['tokens'];
  /** Cleared and protected counts of the projection. */
  clearing: TurnResult['clearing'];
  /** The request was over the window and was made to fit (`fit` says how). */
  clearedToFit: boolean;
  /** How the request was made to fit: results cleared, cut to previews, older messages left out. */
  fit: TurnResult['fit'];
  items: TurnResult['items'];
  /** Pressure the decision was made on: projected history after clearing + prompt prefix. */
  pressureTokens: number | null;
  /** Pressure of the next request (after compaction when it ran). */
  finalPressureTokens: number | null;
  thresholdTokens: number | null;
  capacity: number | null;
  elapsedMs: number;
  failure: Failure | null;
}

/** `compactor compact --json`. */
export interface CompactJsonReport extends IoReport {
  command: 'compact';
  route: RouteReport;
  status: CompactionReport['status'];
  mode: CompactionReport['mode'];
  strategy: CompactionReport['strategy'];
  requestedStrategy: CompactionReport['requestedStrategy'];
  fallbackReason: CompactionReport['fallbackReason'];
  /** Every provider request of the pass, repair requests included. */
  summaryCalls: number;
  /** Of those, repair requests: a summary lacked template sections and was asked for again. */
  repairRequests: number;
  /** Summaries accepted without every template section, one line each. */
  warnings: string[];
  /** What the replaced span had to keep, where each item landed, tokens before and after; null without a Local compaction. */
  receipt: Receipt | null;
  /** How the summary request was built and the share of it the provider's cache served; null without one. */
  summaryCache: SummaryCacheReport | null;
  /** The template sections those summaries lack. */
  missingSections: string[];
  /** The history held nothing a summary could replace: no provider call was made. */
  nothingToCompact: boolean;
  items: { before: number; after: number };
  tokens: { before: number; after: number };
  elapsedMs: number;
  failure: Failure | null;
  /** Cache note on success, null otherwise. */
  note: string | null;
}

/** The route part of a report. */
export function routeReport(route: CompactorSession['route']): RouteReport {
  return {
    name: route.label,
    kind: route.provider,
    model: route.model,
    baseUrl: route.baseUrl,
    apiKeyEnv: route.apiKeyEnv,
    baseUrlEnv: route.baseUrlEnv,
    strategy: route.strategy.kind,
    strategyReason: route.strategy.reason,
    offNativeHost: route.strategy.offNativeHost ?? null,
    http: route.http,
  };
}

/** `time limits: 120 s per request, up to 4 attempts, 300 s per provider call` (nothing offline). */
function timeLimitLines(route: RouteReport): string[] {
  const h = route.http;
  if (h === null) return [];
  return [
    `time limits: ${spokenDuration(h.timeoutMs)} per request, ${h.retries === 0 ? 'one attempt' : `up to ${h.retries + 1} attempts`}, ${spokenDuration(h.retryBudgetMs)} per provider call`,
  ];
}

/**
 * One plain line when a proxy or gateway base URL turned native compaction into a Local
 * summary, naming how to trust the host again: `nativeHosts` in a catalog file.
 */
function nativeHostLines(route: RouteReport): string[] {
  const host = route.offNativeHost;
  if (host === null) return [];
  const from = route.baseUrlEnv !== null ? ` (from ${route.baseUrlEnv})` : '';
  const catalog = JSON.stringify({ providers: { [route.name]: { nativeHosts: [host] } } });
  return [
    `note: ${route.name} summarizes locally because its base URL${from} is on ${host}, not on a host of its native compaction endpoint; if ${host} serves that endpoint, list it under nativeHosts in a catalog file, ${catalog}, and pass --catalog FILE`,
  ];
}

/** The `--inspect` target as the reports name it. */
export function inspectReport(target: InspectTarget | null): string | null {
  return target === null ? null : target.kind === 'stately' ? 'stately' : target.file;
}

const n = (v: number | null): string => (v === null ? 'unknown' : v.toLocaleString('en-US'));
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** One line naming a failure: reason and its bounded, already-redacted message. */
export function failureLine(f: Failure | null): string {
  if (f === null) return 'compaction failed';
  return `compaction failed (${f.reason}): ${f.message}`;
}

function ioLines(r: IoReport): string[] {
  const lines: string[] = [];
  if (r.sessionDir !== null)
    lines.push(
      `store: ${r.sessionDir}${r.boundary !== null ? ` (boundary ${r.boundary}; compactor restore ${r.sessionDir} --at ${r.boundary})` : ''}`,
    );
  if (r.out !== null) lines.push(`wrote: ${r.out} (${r.outFormat})`);
  if (r.inspect !== null) lines.push(`inspection: ${r.inspect}`);
  return lines;
}

function strategyText(ran: string | null, route: RouteReport, fallback: string | null): string {
  if (ran === null) return `${route.strategy} (not needed)`;
  const fell = fallback !== null ? ` — fell back from ${route.strategy}: ${fallback}` : '';
  return `${ran}${fell}`;
}

/** What a report says about its summaries: the calls, any repair request, and accepted gaps. */
interface SummaryFacts {
  strategy: string | null;
  route: RouteReport;
  fallbackReason: string | null;
  summaryCalls: number;
  repairRequests: number;
  warnings: string[];
  receipt: Receipt | null;
  summaryCache: SummaryCacheReport | null;
}

/** `strategy: local; summary calls: 2 (1 repair request)`, then a line per repair and warning. */
function summaryLines(r: SummaryFacts): string[] {
  const repairs = r.repairRequests === 1 ? '1 repair request' : `${r.repairRequests} repair requests`;
  const lines = [
    `strategy: ${strategyText(r.strategy, r.route, r.fallbackReason)}; summary calls: ${r.summaryCalls}${
      r.repairRequests > 0 ? ` (${repairs})` : ''
    }`,
  ];
  if (r.repairRequests > 0)
    lines.push(
      r.warnings.length === 0
        ? 'summary: repaired — the first answer lacked template sections, so it was asked for again and the new answer has them all'
        : 'summary: repaired — the first answer lacked template sections and was asked for again, but the answer kept still lacks some',
    );
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  if (r.summaryCache) lines.push(summaryCacheText(r.summaryCache));
  if (r.receipt) lines.push(receiptText(r.receipt));
  return lines;
}

/** `summary request: the last request sent plus the instructions; 96 % of its input cached`. */
function summaryCacheText(c: SummaryCacheReport): string {
  const how =
    c.request === 'prefix'
      ? 'the last request sent plus the instructions'
      : `a bounded fork of the history${c.fallback === null ? '' : ` (${c.fallback})`}`;
  const cached =
    c.share === null
      ? 'the provider reported no usage'
      : `${Math.round(c.share * 100)} % of its input cached`;
  return `summary request: ${how}; ${cached}`;
}

/** `receipt: 14 items (9 kept, 3 in the summary, 1 on a span's list, 1 added verbatim); 41,200 → 6,300 tokens`. */
function receiptText(r: Receipt): string {
  const count = (place: string) => r.items.filter((i) => i.place === place).length;
  const parts = [
    `${count('kept')} kept`,
    `${count('summary')} in the summary`,
    ...(count('pointer') > 0 ? [`${count('pointer')} by recall id`] : []),
    ...(count('span') > 0 ? [`${count('span')} on a span's list`] : []),
    ...(r.amended > 0 ? [`${r.amended} added verbatim`] : []),
  ];
  return `receipt: ${r.items.length} items (${parts.join(', ')}); ${r.tokensBefore.toLocaleString('en-US')} → ${r.tokensAfter.toLocaleString('en-US')} tokens`;
}

/** Human rendering of {@link RunJsonReport}. */
export function renderRunReport(r: RunJsonReport): string {
  const t = r.tokens;
  const versus =
    r.pressureTokens === null || r.thresholdTokens === null
      ? 'threshold unknown'
      : `pressure ${n(r.pressureTokens)} ${r.pressureTokens < r.thresholdTokens ? '<' : '≥'} threshold ${n(r.thresholdTokens)}`;
  const after =
    r.finalPressureTokens === null
      ? ''
      : r.decision === 'compacted'
        ? `, ${n(r.finalPressureTokens)} after compaction`
        : r.decision === 'cleared'
          ? `, ${n(r.finalPressureTokens)} after clearing old tool results instead of a summary call`
          : '';
  const lines = [
    `${r.file} (${r.format}, session ${r.session})`,
    `route: ${r.route.name} / ${r.route.model} — ${r.route.strategyReason}`,
    ...nativeHostLines(r.route),
    ...timeLimitLines(r.route),
    `decision: ${r.decision}${r.guardReason ? ` (${r.guardReason})` : ''} — ${versus}${after} (capacity ${n(r.capacity)})`,
    `tokens: ${n(t.beforeClearing)} before clearing → ${n(t.afterClearing)} after clearing${
      t.afterCompaction !== null ? ` → ${n(t.afterCompaction)} after compaction` : ''
    }`,
    ...(r.clearing
      ? [
          `clearing: ${n(r.clearing.clearedResults)} result(s) and ${n(r.clearing.clearedInputs)} input(s) cleared; ` +
            `${n(r.clearing.protectedResults)} result(s) in ${n(r.clearing.protectedBatches)} batch(es) protected`,
        ]
      : []),
    `items: ${n(r.items.before)} → ${n(r.items.after)}`,
    ...summaryLines(r),
    `elapsed: ${seconds(r.elapsedMs)}`,
  ];
  if (r.decision === 'failed') lines.push(`failure: ${failureLine(r.failure)}; history unchanged`);
  if (r.decision === 'compacted') lines.push(`note: ${CACHE_NOTE}`);
  if (r.fit)
    lines.push(
      `note: the request was over the window, so it was made to fit: ${n(r.fit.clearedResults)} tool result(s) cleared, ` +
        `${n(r.fit.previewedResults)} cut to previews, ${n(r.fit.droppedMessages)} older message(s) left out ` +
        `(${n(r.fit.tokensBefore)} → ${n(r.fit.tokensAfter)} tokens; the session keeps everything)`,
    );
  if (r.thresholdTokens === null)
    lines.push(
      'hint: the context window is unknown, so compaction never runs; pass --capacity N or a --catalog row',
    );
  return [...lines, ...ioLines(r)].join('\n');
}

/** Human rendering of {@link CompactJsonReport} (what it did on success, the bounded cause on failure). */
export function renderCompactReport(r: CompactJsonReport): string {
  const lines = [
    `${r.file} (${r.format}, session ${r.session})`,
    `route: ${r.route.name} / ${r.route.model} — ${r.route.strategyReason}`,
    ...nativeHostLines(r.route),
    ...timeLimitLines(r.route),
    `${r.mode} compaction ${r.status} in ${seconds(r.elapsedMs)}: ${n(r.items.before)} → ${n(r.items.after)} context items (${n(r.tokens.before)} → ${n(r.tokens.after)} tokens)`,
    ...summaryLines(r),
  ];
  if (r.status === 'failed') lines.push(`failure: ${failureLine(r.failure)}; history unchanged`);
  if (r.nothingToCompact) lines.push(nothingToCompactLine(r.items.before));
  if (r.note !== null) lines.push(`note: ${r.note}`);
  return [...lines, ...ioLines(r)].join('\n');
}
