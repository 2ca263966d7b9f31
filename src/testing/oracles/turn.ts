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
  waitByCost?: boolean;
  wait: { ratio: number; maxTokens: number };
}

/** Since the prompt cache was last rewritten: the last pressure, the largest growth, what the last pass left. */
interface Cycle {
  last: number;
  maxStep: number;
  afterPass: number;
}

export interface TurnRunInput {
  historyRef: string;
  mode?: string;
  loopGuard?: GuardMemory;
  minTurnsPerPass?: number;
  policy?: PolicyNumbers;
  cacheCycle?: Cycle | null;
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
  threshold(policy: PolicyNumbers | undefined, intact: boolean, cycle: Cycle): number | null {
    if (!policy || policy.thresholdTokens === null) return null;
    const { thresholdTokens: t, promptBudgetTokens: budget, wait } = policy;
    if (!policy.waitsForCacheBreak || !intact || budget === null || budget <= t) return t;
    if (policy.waitByCost && !TURN_RULES.waitPays(policy, cycle, t)) return t;
    const cap = Math.floor(wait.maxTokens * Math.min(1, 24_000 / budget));
    return t + Math.min(Math.floor((budget - t) * wait.ratio), cap);
  },
  /**
   * By expected cost (cache reads 1, input 10, cache writes 12.5, output 50): a pass costs what it
   * leaves, written and read again uncached, plus its summary; waiting pays while what a pass
   * leaves plus √(2 × the largest growth of one request × that cost) lies past the threshold.
   */
  waitPays(policy: PolicyNumbers, c: Cycle, threshold: number): boolean {
    const pass = c.afterPass * (10 + 12.5 - 1) + policy.summaryTokens * 50;
    return c.afterPass + Math.sqrt(2 * c.maxStep * pass) > threshold;
  },
  /**
   * The cycle after a request of `pressure` tokens: one that extends the last request sent
   * grows it; any other starts it again (a session's first starts at what a pass would leave).
   */
  nextCycle(policy: PolicyNumbers | undefined, c: Cycle | null, intact: boolean, pressure: number): Cycle {
    const from = c ?? {
      last: 0,
      maxStep: 0,
      afterPass: (policy?.continuityTailTokens ?? 0) + (policy?.summaryTokens ?? 0),
    };
    return { ...from, last: pressure, maxStep: intact ? Math.max(from.maxStep, pressure - from.last) : 0 };
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
  /** The prompt cache's cycle, as the turn hands it on. */
  cycle: Cycle | null;
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
  // A pass rewrites the cached prefix: the cycle starts at the rebuilt request.
  w.facts.cycle = { last: out.pressureTokens, maxStep: 0, afterPass: out.pressureTokens };
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
function decided(m: Measured, policy: PolicyNumbers | undefined, cycle: Cycle): Pressure {
  const thresholdTokens = TURN_RULES.threshold(policy, m.prefixIntact, cycle);
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
    const m = out as Measured;
    w.facts.cycle = TURN_RULES.nextCycle(input.policy, w.facts.cycle, m.prefixIntact, m.pressureTokens);
    w.facts.pressure = decided(m, input.policy, w.facts.cycle);
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
    cycle: given.cacheCycle ?? null,
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
    requestRef: f.projectionRef,
    lastSent: f.sent,
    cacheCycle: f.cycle,
    thresholdTokens: f.pressure?.thresholdTokens ?? null,
    clearedToFit: f.clearedToFit,
    pressureTokens: f.pressureAfter ?? f.pressure?.pressureTokens ?? null,
    loopGuard: {
      consecutiveFailures: decision === 'compacted' ? 0 : decision === 'failed' ? failures + 1 : failures,
    },
  });
}
