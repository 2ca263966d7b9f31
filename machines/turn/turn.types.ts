import type { PromiseActorLogic } from 'xstate';
import type {
  CompactionMode,
  CompactionOutput,
  CompactionStrategy,
  NativeClients,
} from '../compaction/compaction.types.js';
import type { CacheCycle, SentRequest, TurnPolicy } from './cache-policy.js';

/** Loop and thrash guard memory carried from turn to turn. */
export interface LoopGuardState {
  /** Automatic passes that failed in a row (reset by any successful pass). */
  consecutiveFailures: number;
  /** Share of pressure the last automatic pass freed (0..1); null before the first pass. */
  lastFreedRatio: number | null;
  /** Turns since the last successful pass; null when there was none. */
  turnsSinceCompaction: number | null;
}

/**
 * When the loop guard stops automatic compaction: passes that keep failing or make no
 * progress. A window that fills again with new content is no reason: in an agent loop every
 * pass frees room that the next tool output takes, and that is progress.
 */
export interface LoopGuardPolicy {
  /** Stop after this many consecutive failures (default 2). */
  maxConsecutiveFailures: number;
  /** Stop after a pass that freed less than this share (default 0.05). */
  minFreedRatio: number;
}

/** Defaults of {@link LoopGuardPolicy}. */
export const DEFAULT_LOOP_GUARD_POLICY: Readonly<LoopGuardPolicy> = Object.freeze({
  maxConsecutiveFailures: 2,
  minFreedRatio: 0.05,
});

/** A fresh session's {@link LoopGuardState}. */
export const INITIAL_LOOP_GUARD_STATE: Readonly<LoopGuardState> = Object.freeze({
  consecutiveFailures: 0,
  lastFreedRatio: null,
  turnsSinceCompaction: null,
});

/** Why the loop guard skipped a compaction. */
export type LoopGuardReason = 'repeated-failures' | 'ineffective-pass';

/** What a turn decided (TurnResult.decision): one per final state of the turn machine (`belowThreshold` → `below-threshold`). */
export type TurnDecision =
  | 'below-threshold'
  | 'cleared'
  | 'compacted'
  | 'unchanged'
  | 'failed'
  | 'guarded'
  | 'cancelled'
  | 'window-too-small';

/**
 * The part of every request no projection can shrink, in tokens — the system prompt and tool
 * schemas (`prefix`), the task (the first user message) and the room kept for the answer — and
 * the window it must fit (`capacity`, null when unknown).
 */
export interface FixedPart {
  prefix: number;
  task: number;
  reserved: number;
  capacity: number | null;
}

/** Input of one headless turn. Message arrays live in the runtime store under the refs. */
export interface TurnInput {
  turnId: string;
  /** Ref of the durable session history before this turn. */
  historyRef: string;
  /** Ref of pending conversation messages to sync into it; null when there are none. */
  pendingRef: string | null;
  /** Default `automatic`; other modes bypass the loop guard. */
  mode?: CompactionMode;
  strategy: CompactionStrategy;
  /** Which native clients the route has; absent = both (compaction picks Local for a missing one). */
  nativeClients?: NativeClients;
  hierarchical?: boolean;
  maxOverflowRetries?: number;
  retryBackoffMs?: number;
  loopGuard?: LoopGuardState;
  loopGuardPolicy?: Partial<LoopGuardPolicy>;
  /**
   * Clear old tool results instead of compacting when a summary pass would buy fewer turns than
   * this (large tool results in a small window); 0 never clears first. Automatic mode only.
   */
  minTurnsPerPass?: number;
  /** The numbers the turn decides by (threshold, budgets, the wait); absent = an unknown window. */
  policy?: TurnPolicy;
  /** The previous turn's `cacheCycle`: how the request grew since the prompt cache was last rewritten. */
  cacheCycle?: CacheCycle | null;
  /** The previous turn's `lastSent`: the request sent after it, whose prefix the cache may still hold. */
  lastSent?: SentRequest | null;
  /** Clock reading at the start (the runtime reports elapsed ms). */
  startedAt: number;
}

/** Input of `syncHistory`. */
export interface SyncHistoryInput {
  turnId: string;
  historyRef: string;
  pendingRef: string | null;
}
/** Output of `syncHistory`: the live history (the same ref when nothing was pending: no copy). */
export interface SyncHistoryOutput {
  historyRef: string;
  itemCount: number;
  syncedCount: number;
}

/** Input of `normalizeProjection`: the projection is derived from the history, never written back. */
export interface NormalizeProjectionInput {
  turnId: string;
  historyRef: string;
}
/** Output of `normalizeProjection`. */
export interface NormalizeProjectionOutput {
  projectionRef: string;
  itemCount: number;
  /** False on the fast path (already valid, returned as is). */
  changed: boolean;
}

/** Input of `clearToolResults`. */
export interface ClearToolResultsInput {
  turnId: string;
  projectionRef: string;
  /** Call ids whose results stay cleared (decided by the machine from the last request sent). */
  keepCleared: readonly string[];
}
/** Output of `clearToolResults` with the clearing diagnostics (estimates and counts). */
export interface ClearToolResultsOutput {
  projectionRef: string;
  itemCount: number;
  tokensBefore: number;
  tokensAfter: number;
  clearedCount: number;
  protectedBatchCount: number;
  /** Tool results protected. */
  protectedResultCount?: number;
  /** Calls whose inputs became the placeholder. */
  clearedInputCount?: number;
}

/** Input of `clearBeforeCompacting`: the synced history to project with old tool results cleared. */
export interface ClearBeforeCompactingInput {
  turnId: string;
  historyRef: string;
  /** The pressure the cleared request must not exceed (decided by the machine: just under the threshold). */
  targetTokens: number;
  /** Call ids whose results stay cleared (decided by the machine from the last request sent). */
  keepCleared: readonly string[];
}
/** The projection with old tool results cleared, and its pressure. */
export interface ClearBeforeCompactingOutput extends ClearToolResultsOutput {
  pressureTokens: number;
  /** The print of the cleared request. */
  sent: SentRequest;
}

/** Input of `fitRequest`: the history the request is built from (the compacted one after a pass). */
export interface FitRequestInput {
  turnId: string;
  historyRef: string;
  /** The pressure the request must not exceed (decided by the machine: the prompt budget). */
  budgetTokens: number;
  /** Call ids whose results stay cleared (decided by the machine from the last request sent). */
  keepCleared: readonly string[];
}
/** A request that fits the prompt budget, and what it took (clearing, previews, older exchanges left out). */
export interface FitRequestOutput {
  projectionRef: string;
  itemCount: number;
  tokensBefore: number;
  projectedTokens: number;
  pressureTokens: number;
  clearedResults: number;
  previewedResults: number;
  droppedMessages: number;
  /** The print of the fitted request. */
  sent: SentRequest;
}

/** What clearing did to the projection: results cleared, batches and results protected, inputs cleared. */
export interface ClearingCounts {
  clearedResults: number;
  protectedBatches: number;
  protectedResults: number;
  clearedInputs: number;
}

/** Input of `estimatePressure`. */
export interface EstimatePressureInput {
  turnId: string;
  projectionRef: string;
  /** The last request sent, to tell whether this one extends it unchanged. */
  sent: SentRequest | null;
}
/** Output of `estimatePressure`: facts of the request, measured; the machine decides from them. */
export interface EstimatePressureOutput {
  /** Projected history + prompt overhead. */
  pressureTokens: number;
  projectedTokens: number;
  /** The request extends the last one sent unchanged, so its whole prefix is still cached. */
  prefixIntact: boolean;
  /** Tokens of the newest step of the agent loop (the last non-tool message and the results after it). */
  newestStepTokens: number;
  /** What no projection can shrink, and the window; absent = not measured (it is taken to fit). */
  fixedPart?: FixedPart;
  /** The print of the measured request. */
  sent: SentRequest;
}
/** The pressure and the numbers the turn decided from it (the threshold of this turn, the turns a pass buys). */
export interface Pressure {
  /** Projected history + prompt overhead. */
  pressureTokens: number;
  projectedTokens: number;
  /** This turn's compaction threshold (put off while the cache holds); null = never compacts. */
  thresholdTokens: number | null;
  /** Effective capacity minus reserved output; null when unknown (preflight budget). */
  promptBudgetTokens: number | null;
  /** Local summary input budget handed to compaction; null = unknown. */
  summaryInputBudget: number | null;
  /** Turns of growth like the newest step that a summary pass would buy; null = unknown. */
  turnsPerPass: number | null;
  /** What no projection can shrink, and the window; absent = not measured (it is taken to fit). */
  fixedPart?: FixedPart;
}

/** Input of `rebuildProjection`: project the compacted history. */
export interface RebuildProjectionInput {
  turnId: string;
  historyRef: string;
  /** Call ids whose results stay cleared (decided by the machine from the last request sent). */
  keepCleared: readonly string[];
}
/** Output of `rebuildProjection`. */
export interface RebuildProjectionOutput {
  projectionRef: string;
  itemCount: number;
  projectedTokens: number;
  pressureTokens: number;
  /** The print of the rebuilt request. */
  sent: SentRequest;
}

/** Preflight advisory: it reports, it never blocks. */
export interface PreflightAdvisory {
  estimatedTokens: number;
  budgetTokens: number | null;
  percentUsed: number | null;
  overBudget: boolean;
}

/** What a turn is given when it starts; nothing of it changes while the turn runs. */
export interface TurnGiven {
  turnId: string;
  mode: CompactionMode;
  strategy: CompactionStrategy;
  nativeClients: NativeClients;
  hierarchical: boolean;
  maxOverflowRetries: number | undefined;
  retryBackoffMs: number | undefined;
  startedAt: number;
  pendingRef: string | null;
  minTurnsPerPass: number;
  loopGuard: LoopGuardState;
  loopGuardPolicy: LoopGuardPolicy;
  policy: TurnPolicy;
}

/**
 * The turn's context: refs, numbers and bounded records. XState copies it key by key at every
 * assign, and V8 keeps an object built that way fast only while it has fewer than 20 keys (past
 * that each copy costs about 20 times more): what the turn is given stays under one key, `given`.
 */
export interface TurnContext {
  given: TurnGiven;
  historyRef: string;
  itemsBefore: number;
  syncedCount: number;
  projectionRef: string | null;
  projectionItems: number;
  clearing: Omit<ClearToolResultsOutput, 'projectionRef' | 'itemCount'> | null;
  pressure: Pressure | null;
  compaction: CompactionOutput | null;
  rebuilt: Omit<RebuildProjectionOutput, 'sent'> | null;
  /** Pressure after old tool results were cleared instead of compacting, when that ran. */
  clearedFirst: { pressureTokens: number } | null;
  /** How the request was made to fit the prompt budget, when it was over. */
  fitted: Omit<FitRequestOutput, 'projectionRef' | 'itemCount' | 'sent'> | null;
  guardReason: LoopGuardReason | null;
  /** The outcome the turn ends with once its request fits. */
  outcome: TurnDecision | null;
  /** Fitting ran (whether or not it worked): a request is fitted at most once. */
  fitTried: boolean;
  /** The prompt cache's cycle, advanced by each request measured and restarted by a pass. */
  cacheCycle: CacheCycle | null;
  /** The request the cache decisions compare against: the last one this turn measured or would send. */
  lastSent: SentRequest | null;
  /** The print of the current projection (the request the turn ends with). */
  projectionSent: SentRequest | null;
}

/** External events. */
export type TurnEvent = { type: 'turn.cancelled' };

/**
 * What a turn reports. Every layer above reports these names as they are; only a store
 * reference (`…Ref`) becomes the messages it names (`historyRef` → `history`, `requestRef` →
 * `request`), and `startedAt` the time the turn took.
 */
export interface TurnOutput {
  decision: TurnDecision;
  guardReason: LoopGuardReason | null;
  /** Strategy that ran, or null when no compaction ran. */
  strategy: CompactionStrategy | null;
  fallbackReason: CompactionOutput['fallbackReason'];
  /** Provider requests of the turn's compaction, repair requests included. */
  summaryCalls: number;
  /** Of those, repair requests: a summary missed template sections and was asked for again. */
  repairRequests: number;
  /** The session history after the turn (compacted, or the synced one). */
  historyRef: string;
  /** The request to send next (the projection the turn ends with); null only when cancelled before it existed. */
  requestRef: string | null;
  items: { before: number; after: number };
  tokens: { beforeClearing: number | null; afterClearing: number | null; afterCompaction: number | null };
  /** Clearing diagnostics of the projection; null when the turn was cancelled before clearing. */
  clearing: ClearingCounts | null;
  /** The request was over the prompt budget and was made to fit (`fit` says how). */
  clearedToFit: boolean;
  /** How the request was made to fit: results cleared, cut to previews, older messages left out. */
  fit: {
    tokensBefore: number;
    tokensAfter: number;
    clearedResults: number;
    previewedResults: number;
    droppedMessages: number;
  } | null;
  pressureTokens: number | null;
  thresholdTokens: number | null;
  advisory: PreflightAdvisory | null;
  compaction: CompactionOutput | null;
  /** Pass this into the next turn's input. */
  loopGuard: LoopGuardState;
  /** Pass this into the next turn's input: the prompt cache's cycle (null when no request was measured). */
  cacheCycle: CacheCycle | null;
  /** Pass this into the next turn's input: the print of the request the turn ends with. */
  lastSent: SentRequest | null;
  /** What no projection can shrink, when measured; it did not fit the window when `decision` is `window-too-small`. */
  fixedPart: FixedPart | null;
  startedAt: number;
}

/** `syncHistory` actor logic. */
export type SyncHistoryLogic = PromiseActorLogic<SyncHistoryOutput, SyncHistoryInput>;
/** `normalizeProjection` actor logic. */
export type NormalizeProjectionLogic = PromiseActorLogic<NormalizeProjectionOutput, NormalizeProjectionInput>;
/** `clearToolResults` actor logic. */
export type ClearToolResultsLogic = PromiseActorLogic<ClearToolResultsOutput, ClearToolResultsInput>;
/** `estimatePressure` actor logic. */
export type EstimatePressureLogic = PromiseActorLogic<EstimatePressureOutput, EstimatePressureInput>;
/** `clearBeforeCompacting` actor logic. */
export type ClearBeforeCompactingLogic = PromiseActorLogic<
  ClearBeforeCompactingOutput,
  ClearBeforeCompactingInput
>;
/** `fitRequest` actor logic. */
export type FitRequestLogic = PromiseActorLogic<FitRequestOutput, FitRequestInput>;
/** `rebuildProjection` actor logic. */
export type RebuildProjectionLogic = PromiseActorLogic<RebuildProjectionOutput, RebuildProjectionInput>;
