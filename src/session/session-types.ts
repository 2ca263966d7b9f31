import type { CompactionMode, LoopGuardState, TurnPolicy } from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import type { AnchoredPressure } from '../estimate/usage-anchor.js';
import type { Message } from '../messages/message.js';
import type { Budgets, Limits } from '../projection/index.js';
import type { ProjectionDiagnostics } from '../projection/diagnostics.js';
import type { Checkpoint } from '../runtime/checkpoint.js';
import type { TurnResult } from '../runtime/turn-runner-types.js';
import type { SummaryCacheReport } from '../runtime/local-summary/summary-prefix.js';
import type { BoundaryInfo, SessionStore } from '../store/index.js';
import type { CacheHealthMonitor, CacheUsage, CacheUsageVerdict } from './cache-health.js';
import type { RequestEnvelope } from './parent-context.js';
import type { SessionCompactionReport } from './report.js';
import type { SessionRoute } from './route.js';
import type { SessionConfig } from './config.js';
import type { ToolSchema } from '../providers/types.js';
import type { CompactorSessionOptions } from './options.js';

/** Options of {@link CompactorSession.prepareRequest}. */
export interface PrepareRequestOptions {
  /** Interactive request; headless requests always clear locally. */
  interactive?: boolean;
  /** The interactive request carries Anthropic native context edits, so local clearing is skipped. */
  nativeContextEdits?: boolean;
}

/** The next request's messages, with clearing diagnostics and the budgets they were computed with. */
export interface PreparedRequest {
  messages: readonly Message[];
  diagnostics: ProjectionDiagnostics;
  budgets: Budgets;
  /**
   * Pressure of this request: anchored on the usage the provider reported for the last
   * request recorded with {@link CompactorSession.recordUsage} plus the local estimate of
   * what came after, or prefix + local estimate when there is no usable anchor.
   */
  pressure: AnchoredPressure;
}

/** Options of {@link CompactorSession.runTurn}. */
export interface SessionTurnOptions {
  /** New conversation messages to sync into history first; validated and stored durably. */
  pending?: readonly Message[];
  /**
   * Aborting cancels the turn (decision `cancelled`; the provider request in flight is
   * aborted). History keeps the synced messages, except with `storeWrites: 'onSuccess'`:
   * then nothing of the turn is kept and the session directory is as it was before it.
   */
  signal?: AbortSignal;
  /**
   * Called when the turn did not fail, before anything of it is committed to the store (its
   * boundary and, with `storeWrites: 'onSuccess'`, the messages held back). Write the
   * caller's own outputs here: if it throws, nothing of the turn is committed and the error
   * propagates.
   */
  beforeCommit?: (result: TurnResult) => void | Promise<void>;
  /**
   * Called with the turn machine's checkpoint after every step, for a caller that keeps the
   * in-flight turn somewhere other than the session directory.
   */
  onCheckpoint?: (checkpoint: Checkpoint) => void;
  /**
   * Continue this turn from a checkpoint `onCheckpoint` gave (of a turn that never committed,
   * on the same history and pending messages) instead of starting it again.
   */
  resumeFrom?: Checkpoint;
  /**
   * Hold the turn: its messages and compaction stay in memory, nothing is written, and the
   * session runs no other turn until {@link CompactorSession.settleTurn} keeps or drops it (a
   * proxy keeps it once the provider accepted the request). A turn that fails or is cancelled
   * leaves the session as it was.
   */
  held?: boolean;
}

/** A turn's result plus the durable boundary it recorded. */
export interface SessionTurnResult extends TurnResult {
  boundary: BoundaryInfo | null;
  /** Summaries of this turn's compaction accepted without every template section. */
  warnings: string[];
  /** The template sections they lack. */
  missingSections: string[];
  /**
   * How this turn's summary request was built (over the last request sent, or a bounded fork)
   * and the share of its input the provider's prompt cache served; null when no summary was asked for.
   */
  summaryCache: SummaryCacheReport | null;
}

/** A compaction that did not fail, as {@link CompactOptions.beforeCommit} sees it. */
export interface CompactionToCommit {
  status: 'compacted' | 'unchanged';
  /** The history after the pass (the compacted one, or the history itself when unchanged). */
  history: readonly Message[];
}

/** Options of {@link CompactorSession.compact}. */
export interface CompactOptions {
  /** Default `manual` (always summarizes). */
  mode?: CompactionMode;
  /** Custom instructions appended to the summary prompt (and sent to native endpoints). */
  instructions?: string;
  /** For `modelSwitch`: the model used before, named in the failure note. */
  previousModel?: string;
  /** Aborting rejects the call with the signal's reason; history stays unchanged. */
  signal?: AbortSignal;
  /** Like {@link SessionTurnOptions.beforeCommit}, for a compaction that did not fail. */
  beforeCommit?: (outcome: CompactionToCommit) => void | Promise<void>;
}

/** A Compactor session embedded in an agent loop. Not re-entrant: one run at a time. */
export interface CompactorSession {
  /** The live session history (replaced, never mutated, by compaction). */
  readonly history: readonly Message[];
  /** The resolved compaction route: provider, model, strategy, window. */
  readonly route: Readonly<Omit<SessionRoute, 'summary' | 'standalone' | 'inline' | 'estimator' | 'secrets'>>;
  /** The token estimator every count of this session uses (the route's encoding unless given). */
  readonly estimator: Estimator;
  /**
   * The one resolved configuration: limits, the whole clearing policy, compaction settings and
   * the budgets, resolved from the options once (again when the envelope changes, since the
   * prefix may be estimated from it).
   */
  /** The settings resolved once and frozen, with the numbers every turn decides by (`turn`). */
  readonly config: Readonly<SessionConfig & { turn: Readonly<TurnPolicy> }>;
  /** `config.limits`: the projection limits in force. */
  readonly limits: Limits;
  /** `config.budgets`: the budgets requests are projected with. */
  readonly budgets: Budgets;
  /** Prompt-cache health monitor; feed it each request's usage. */
  readonly cacheHealth: CacheHealthMonitor;
  /** The durable store, when `sessionDir` was given. */
  readonly store: SessionStore | null;
  /** How many messages the store had recorded when the session opened (0: a new session or no store). */
  readonly resumedFrom: number;
  /** Loop-guard memory carried between turns. */
  readonly loopGuard: LoopGuardState;
  /**
   * Records the usage the provider reported for `request` (the messages actually sent):
   * feeds the cache-health monitor and anchors the next {@link PreparedRequest.pressure}.
   */
  recordUsage(usage: CacheUsage, request: readonly Message[]): CacheUsageVerdict;
  /** Appends messages (validated with MessageSchema; written to the store when there is one). */
  append(...messages: Message[]): void;
  /** Sets or clears the active request envelope (parent context for summaries; prefix tokens). */
  setEnvelope(envelope: RequestEnvelope | undefined): void;
  /**
   * Replaces the session's limits or clearing policy (each group given replaces the whole
   * group); the settings are resolved again, once, and apply from the next request and turn.
   * Refused while a turn or compaction runs.
   */
  configure(settings: Pick<CompactorSessionOptions, 'limits' | 'policy'>): void;
  /** The next request: pairing repair + clearing (none with native edits when interactive), with diagnostics. */
  prepareRequest(options?: PrepareRequestOptions): PreparedRequest;
  /** One headless turn in automatic mode; a compaction replaces history and is recorded. */
  runTurn(options?: SessionTurnOptions): Promise<SessionTurnResult>;
  /**
   * Ends a turn run with `held`: kept, it is written to the store (resolves once durable);
   * dropped, the session is exactly as it was before the turn. No-op without a held turn.
   */
  settleTurn(kept: boolean): Promise<void>;
  /** An explicit compaction pass (reports what it did, or a bounded cause on failure). */
  compact(options?: CompactOptions): Promise<SessionCompactionReport>;
  /**
   * The recall tool's definition (name, description, JSON schema): the same bytes in every
   * request of every session. Offer it from a session's first request, so the tool list never
   * changes mid-session; answer its calls with {@link CompactorSession.recall}.
   */
  readonly recallTool: Readonly<ToolSchema>;
  /**
   * Answers a call of the recall tool (`{ id, range?: { start, end } }`, or its JSON text): the
   * whole original of the cleared result with that id, or the lines asked for, from anything
   * the session ever held (its store's log included). When `request` (default: the history)
   * already holds that text, the answer points there instead of repeating it. Bad arguments and
   * unknown ids get a one-line answer the model can read; nothing throws.
   */
  recall(args: unknown, request?: readonly Message[]): string;
  /** Closes the store (messages still held back are dropped) and releases its lock. */
  close(): void;
}
