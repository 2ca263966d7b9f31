import type { Expected, PathStep, Reply } from '../path-types.js';
import { thrown, Walk } from './walk.js';
import { ModelPathError } from '../../core/errors.js';

/*
 * What one headless turn must do, from the rules: sync pending messages into the history,
 * normalize and clear the projection, estimate pressure, then decide. A window smaller than
 * what no projection can shrink (prompt, tools, task, reserved output) ends the turn at once.
 * Below the threshold (or with no threshold) no summary call is made. Where a summary pass
 * would buy fewer steps than the policy asks, old tool results are cleared first: a request
 * that then fits needs no summary call, and when the newest step alone fills what a pass would
 * leave, compaction is not tried either. An automatic pass the loop guard stops is skipped.
 * Otherwise the full history is compacted and the projection rebuilt; a failed or unchanged
 * pass keeps history and projection. Whatever the outcome, a request still over the prompt
 * budget is made to fit once before the turn ends. A cancel ends the turn from any working step.
 *
 * TURN_RULES holds every rule a change to the turn may touch; the walk below only follows it.
 */

/** The loop guard's memory and policy as a turn's input gives them. */
interface GuardMemory {
  consecutiveFailures?: number;
  lastFreedRatio?: number | null;
  turnsSinceCompaction?: number | null;
}

/** The numbers a turn decides by, as its input gives them (absent: an unknown window). */
interface PolicyNumbers {
  thresholdTokens: number | null;
  promptBudgetTokens: number | null;
  prefixTokens: number;
  continuityTailTokens: number;
  summaryTokens: number;
  waitsForCacheBreak: boolean;
  wait: { ratio: number; maxTokens: number };
}

export interface TurnRunInput {
  historyRef: string;
  mode?: string;
  loopGuard?: GuardMemory;
  minTurnsPerPass?: number;
  policy?: PolicyNumbers;
}

/** What `estimatePressure` measures of the request. */
interface Measured {
  fixedPart?: Pressure['fixedPart'];
  pressureTokens: number;
  prefixIntact: boolean;
  newestStepTokens: number;
}

interface Pressure {
  fixedPart?: { prefix: number; task: number; reserved: number; capacity: number | null };
  pressureTokens: number;
  thresholdTokens: number | null;
  promptBudgetTokens: number | null;
  turnsPerPass?: number | null;
}

export const TURN_RULES = {
  /**
   * This turn's threshold: the policy's, put off while the request extends the last one sent
   * (its prefix is still cached) to `wait.ratio` of the way to the prompt budget, at most
   * `wait.maxTokens` past it in a budget up to 24,000 tokens (fewer in proportion beyond).
   */
  threshold(policy: PolicyNumbers | undefined, intact: boolean): number | null {
    if (!policy || policy.thresholdTokens === null) return null;
    const { thresholdTokens: t, promptBudgetTokens: budget, wait } = policy;
    if (!policy.waitsForCacheBreak || !intact || budget === null || budget <= t) return t;
    const cap = Math.floor(wait.maxTokens * Math.min(1, 24_000 / budget));
    return t + Math.min(Math.floor((budget - t) * wait.ratio), cap);
  },
  /** Steps like the newest a pass buys: the room between what it leaves and the threshold. */
  turnsPerPass(policy: PolicyNumbers | undefined, threshold: number | null, step: number): number | null {
    if (!policy || threshold === null || policy.promptBudgetTokens === null || step <= 0) return null;
    const left = policy.continuityTailTokens + policy.summaryTokens + policy.prefixTokens;
    return left >= threshold ? 0 : (threshold - left) / step;
  },
  /** The working steps before the decision, each waiting on one actor, in order. */
  pipeline: [
    ['working.syncing', 'syncHistory'],
    ['working.normalizing', 'normalizeProjection'],
    ['working.clearing', 'clearToolResults'],
    ['working.estimating', 'estimatePressure'],
  ] as const,
  /** The system prompt, tools, task and reserved output alone exceed the window: the turn ends. */
  windowTooSmall: ({ fixedPart: f }: Pressure) =>
    f !== undefined && f.capacity !== null && f.prefix + f.task + f.reserved > f.capacity,
  belowThreshold: (p: Pressure) => p.thresholdTokens === null || p.pressureTokens < p.thresholdTokens,
  /** Clear old tool results first: an automatic pass would buy fewer steps than asked. */
  clearFirst: (p: Pressure, input: TurnRunInput) =>
    (input.mode ?? 'automatic') === 'automatic' &&
    (input.minTurnsPerPass ?? 0) > 0 &&
    p.turnsPerPass != null &&
    p.turnsPerPass < (input.minTurnsPerPass ?? 0),
  /** The cleared request fits (the prompt budget, else the threshold). */
  clearedFits: (p: Pressure, after: number) => {
    const limit = p.promptBudgetTokens ?? p.thresholdTokens;
    return limit !== null && after <= limit;
  },
  /** A pass could not leave room for one more step like the newest. */
  passUseless: (p: Pressure) => p.turnsPerPass != null && p.turnsPerPass < 1,
  /** Why the loop guard skips an automatic pass, checked in this order; null = it does not. */
  loopGuard(memory: GuardMemory): string | null {
    if ((memory.consecutiveFailures ?? 0) >= 2) return 'repeated-failures';
    const freed = memory.lastFreedRatio ?? null;
    if (freed !== null && freed < 0.05) return 'ineffective-pass';
    return null;
  },
  /** The request must be made to fit before it is sent. */
  overBudget: (p: Pressure, current: number) =>
    p.promptBudgetTokens !== null && current > p.promptBudgetTokens,
  /** The final state each decision is reported from. */
  decisions: {
    belowThreshold: 'below-threshold',
    cleared: 'cleared',
    guarded: 'guarded',
    compacted: 'compacted',
    unchanged: 'unchanged',
    failed: 'failed',
    cancelled: 'cancelled',
    windowTooSmall: 'window-too-small',
  } as Record<string, string>,
};

interface Facts {
  historyRef: string;
  projectionRef: string | null;
  /** The print of the request at `projectionRef` (measured or built), as the turn hands it on. */
  sent: unknown;
  pressure: Pressure | null;
  guardReason: string | null;
  report: Record<string, any> | null;
  pressureAfter: number | null;
  clearedToFit: boolean;
  outcome: string | null;
  fitTried: boolean;
}

const doneOf = (r: Reply) => (r as { done: Record<string, any> }).done;

function decide(w: Walk<Facts>, input: TurnRunInput): void {
  const p = w.facts.pressure!;
  if (TURN_RULES.windowTooSmall(p)) return w.go('working.deciding', 'windowTooSmall');
  if (TURN_RULES.belowThreshold(p)) return w.go('working.deciding', 'belowThreshold');
  if (TURN_RULES.clearFirst(p, input)) return w.go('working.deciding', 'working.clearingFirst');
  w.go('working.deciding');
  choose(w, input);
}

function choose(w: Walk<Facts>, input: TurnRunInput): void {
  const reason =
    (input.mode ?? 'automatic') === 'automatic' ? TURN_RULES.loopGuard(input.loopGuard ?? {}) : null;
  if (reason === null) return w.go('working.choosing', 'working.compacting');
  w.facts.guardReason = reason;
  w.go('working.choosing');
  settle(w, 'guarded');
}

/** Ends the turn with `outcome`, making its request fit first when it is over the budget. */
function settle(w: Walk<Facts>, outcome: string): void {
  w.facts.outcome = outcome;
  w.go('working.settling');
  const current = w.facts.pressureAfter ?? w.facts.pressure!.pressureTokens;
  if (!w.facts.fitTried && TURN_RULES.overBudget(w.facts.pressure!, current)) return w.go('working.fitting');
  w.go(outcome);
}

function clearedFirst(w: Walk<Facts>, input: TurnRunInput, r: Reply): void {
  const p = w.facts.pressure!;
  if (thrown(r)) return choose(w, input);
  const out = doneOf(r);
  if (TURN_RULES.clearedFits(p, out.pressureTokens)) {
    w.facts.projectionRef = out.projectionRef;
    w.facts.sent = out.sent;
    w.facts.pressureAfter = out.pressureTokens;
    return w.go('cleared');
  }
  if (!TURN_RULES.passUseless(p)) return choose(w, input);
  w.facts.projectionRef = out.projectionRef;
  w.facts.sent = out.sent;
  w.facts.pressureAfter = out.pressureTokens;
  settle(w, 'cleared');
}

/** The compaction pass answered (or crashed). */
function compacted(w: Walk<Facts>, r: Reply): void {
  if (thrown(r)) return settle(w, 'failed');
  const report = doneOf(r);
  w.facts.report = report;
  if (report.status === 'compacted') return w.go('working.rebuildingProjection');
  settle(w, report.status === 'unchanged' ? 'unchanged' : 'failed');
}

function rebuilt(w: Walk<Facts>, r: Reply): void {
  if (thrown(r)) return settle(w, 'failed');
  const out = doneOf(r);
  w.facts.projectionRef = out.projectionRef;
  w.facts.sent = out.sent;
  w.facts.pressureAfter = out.pressureTokens;
  settle(w, 'compacted');
}

function fitted(w: Walk<Facts>, r: Reply): void {
  w.facts.fitTried = true;
  if (!thrown(r)) {
    const out = doneOf(r);
    w.facts.projectionRef = out.projectionRef;
    w.facts.sent = out.sent;
    w.facts.pressureAfter = out.pressureTokens;
    w.facts.clearedToFit = true;
  }
  settle(w, w.facts.outcome!);
}

/** The pressure as the turn decides from it: the threshold, the budget, the steps a pass buys. */
function decided(m: Measured, policy: PolicyNumbers | undefined): Pressure {
  const thresholdTokens = TURN_RULES.threshold(policy, m.prefixIntact);
  return {
    ...(m.fixedPart ? { fixedPart: m.fixedPart } : {}),
    pressureTokens: m.pressureTokens,
    thresholdTokens,
    promptBudgetTokens: policy?.promptBudgetTokens ?? null,
    turnsPerPass: TURN_RULES.turnsPerPass(policy, thresholdTokens, m.newestStepTokens),
  };
}

/** Reads one step of a pipeline state: the actor's answer stored where it belongs. */
function piped(w: Walk<Facts>, input: TurnRunInput, at: number, r: Reply): void {
  const out = doneOf(r);
  if (at === 0) w.facts.historyRef = out.historyRef;
  else if (at === 1 || at === 2) w.facts.projectionRef = out.projectionRef;
  else {
    w.facts.pressure = decided(out as Measured, input.policy);
    w.facts.sent = out.sent;
  }
  const next = TURN_RULES.pipeline[at + 1];
  if (next) w.go(next[0]);
  else decide(w, input);
}

/** The actor each waiting state waits on (besides the pipeline's). */
const WAITS: Record<string, string> = {
  'working.clearingFirst': 'clearBeforeCompacting',
  'working.compacting': 'compaction',
  'working.rebuildingProjection': 'rebuildProjection',
  'working.fitting': 'fitRequest',
};

/** The actor the turn waits on where the walk is, or null. */
function waitingOn(w: Walk<Facts>): string | null {
  const inPipeline = TURN_RULES.pipeline.find(([state]) => state === w.here);
  return inPipeline ? inPipeline[1] : (WAITS[w.here] ?? null);
}

function step(w: Walk<Facts>, input: TurnRunInput, s: PathStep): void {
  const actor = waitingOn(w);
  if (actor === null) throw new ModelPathError(`the run already ended in ${w.here}`);
  if (s.kind === 'send' && s.event.type === 'turn.cancelled') {
    w.calls.push(actor);
    return w.go('cancelled');
  }
  const r = w.reply(s, actor);
  const at = TURN_RULES.pipeline.findIndex(([state]) => state === w.here);
  if (at >= 0) return piped(w, input, at, r);
  if (actor === 'clearBeforeCompacting') return clearedFirst(w, input, r);
  if (actor === 'compaction') return compacted(w, r);
  if (actor === 'rebuildProjection') return rebuilt(w, r);
  fitted(w, r);
}

/** The turn oracle: input and steps → states, calls, output. */
export function turnOracle(input: unknown, steps: readonly PathStep[]): Expected {
  const given = input as TurnRunInput;
  const w = new Walk<Facts>(TURN_RULES.pipeline[0][0], {
    historyRef: given.historyRef,
    projectionRef: null,
    sent: null,
    pressure: null,
    guardReason: null,
    report: null,
    pressureAfter: null,
    clearedToFit: false,
    outcome: null,
    fitTried: false,
  });
  for (const s of steps) step(w, given, s);
  const f = w.facts;
  const decision = TURN_RULES.decisions[w.here];
  const failures = given.loopGuard?.consecutiveFailures ?? 0;
  return w.verdict(Object.keys(TURN_RULES.decisions), {
    decision,
    guardReason: f.guardReason,
    summaryCalls: f.report?.summaryCalls ?? 0,
    historyRef: w.here === 'compacted' ? f.report!.historyRef : f.historyRef,
    projectionRef: f.projectionRef,
    lastSent: f.sent,
    thresholdTokens: f.pressure?.thresholdTokens ?? null,
    clearedToFit: f.clearedToFit,
    pressureTokens: f.pressureAfter ?? f.pressure?.pressureTokens ?? null,
    loopGuard: {
      consecutiveFailures: decision === 'compacted' ? 0 : decision === 'failed' ? failures + 1 : failures,
    },
  });
}
