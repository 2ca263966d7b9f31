import type { InspectionEvent, Observer } from 'xstate';
import type {
  CompactionMode,
  CompactionOutput,
  CompactionStrategy,
  Failure,
  LoopGuardState,
  TurnInput,
  TurnOutput,
} from '../../machines/index.js';
import type { Receipt } from '../summary/receipt.js';
import type { Message } from '../messages/message.js';
import type { Checkpoint } from './checkpoint.js';
import type { CompactionDeps } from './compaction/compaction-deps.js';
import type { Estimator } from '../estimate/estimator.js';
import type { resolveRunConfig } from './resolved-config.js';

// The runner's public contract on its own, so the files that implement it (run-turn,
// run-compaction, turn-reports) and the session import types without importing each other.

/** Source of time for elapsed-ms reports (tests pass a fake). */
export interface Clock {
  now(): number;
}

/** An XState inspection observer, as `createActor(…, { inspect })` takes it. */
export type InspectOption = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/**
 * Dependencies of {@link createTurnRunner}: the settings come resolved once (`config`, from
 * `resolveRunConfig`, capacity retries and their backoff included) and are used as given.
 */
export interface TurnRunnerDeps {
  estimator: Estimator;
  /** The settings, resolved once by `resolveRunConfig`. */
  config: ReturnType<typeof resolveRunConfig>;
  /** Clients and summarizer of the compaction strategies (the estimator comes from the top level). */
  compaction: Omit<CompactionDeps, 'estimator'>;
  /** Strategy of the route (`selectStrategy(route).kind`); default `local`. Falls back to local when its client is missing. */
  strategy?: CompactionStrategy;
  /** Two-band local summaries (abstract of the older part, detail of the newer). */
  hierarchical?: boolean;
  clock?: Clock;
  /** Inspection observer for every actor of the turn (see src/runtime/inspection.ts). */
  inspect?: InspectOption;
}

/** One turn's request. */
export interface TurnRequest {
  turnId: string;
  /** Durable session history before the turn (not modified). */
  history: readonly Message[];
  /** Conversation messages to sync into it first. */
  pending?: readonly Message[];
  /** Default `automatic`. */
  mode?: CompactionMode;
  /** The previous turn's `result.loopGuard`. */
  loopGuard?: LoopGuardState;
  /**
   * The previous turn's `result.lastSent` (the print of the request sent after it): while this
   * turn's request extends it unchanged, the prompt cache still holds it and compaction may
   * wait (`compaction.waitsForCacheBreak`). Without it compaction runs at the threshold.
   */
  lastSent?: TurnInput['lastSent'];
  /**
   * The previous turn's `result.cacheCycle`: how the history grew since the prompt cache was
   * last rewritten, for the wait by expected cost (`compaction.waitByCost`).
   */
  cacheCycle?: TurnInput['cacheCycle'];
  /**
   * The last request sent to the model, which a summary asks over (see `lastRequest` of the
   * Local summarizer). Kept with the turn's checkpoints, so a resumed turn's summary asks over
   * the very same messages and the provider's prompt cache still serves them.
   */
  lastRequest?: {
    messages: readonly Message[];
    /** The provider's count of its whole input, when it reported one. */
    providerTokens?: number;
  };
}

/** The messages of the last request sent, and the provider's count of its whole input when it reported one. */
export type SentMessages = NonNullable<TurnRequest['lastRequest']>;

/** Options of a run. */
export interface RunOptions {
  /** Aborting cancels the turn (`turn.cancelled`); in-flight actors get their signals aborted. */
  signal?: AbortSignal;
  /**
   * Write a checkpoint here, atomically, after every step from the compaction pass on (the
   * steps before it repeat for free). It holds references into the history the turn started
   * from, not the messages: a few kilobytes.
   */
  checkpointPath?: string;
  /**
   * Runs once just before the turn writes its first checkpoint file (most turns write none),
   * for a caller that keeps the file it replaces to put it back.
   */
  beforeFirstCheckpoint?: () => Promise<void>;
  /** Called with the same checkpoint at each of those steps, for a caller that keeps it elsewhere. */
  onCheckpoint?: (checkpoint: Checkpoint) => void;
}

/** Options of a resumed turn. */
export interface ResumeOptions extends RunOptions {
  /**
   * The session history the turn started from (its request's `history`): a checkpoint by
   * reference needs it; one written whole by an older version does not.
   */
  history?: readonly Message[];
}

/** A compaction pass as reported to the user. */
export interface CompactionReport {
  status: CompactionOutput['status'];
  mode: CompactionMode;
  requestedStrategy: CompactionStrategy;
  strategy: CompactionStrategy;
  fallbackReason: CompactionOutput['fallbackReason'];
  itemsBefore: number;
  itemsAfter: number;
  /** Provider calls of the pass, repair requests included. */
  summaryCalls: number;
  /** Of those, repair requests for summaries that missed template sections. */
  repairRequests: number;
  /**
   * What the replaced span had to keep and where each item landed (kept, summary, pointer, or
   * amended: added verbatim to the summary), tokens before and after; null unless a Local pass compacted.
   */
  receipt: Receipt | null;
  /** The history held nothing a summary could replace, so no provider call was made. */
  nothingToCompact: boolean;
  elapsedMs: number;
  failure: Failure | null;
  /** The history after the pass: the compacted one, or the input itself when failed/unchanged. */
  history: readonly Message[];
}

/** What one turn did. */
export interface TurnResult extends Omit<
  TurnOutput,
  'historyRef' | 'requestRef' | 'fixedPart' | 'startedAt' | 'compaction'
> {
  /** How long the turn took. */
  elapsedMs: number;
  /** The compaction pass this turn ran, as reported to the user; null when none ran. */
  compaction: CompactionReport | null;
  /** Session history after the turn (the input array itself when nothing changed: no copy). */
  history: readonly Message[];
  /** The next request window; null only when cancelled before it was built. */
  request: readonly Message[] | null;
}

/** Manual `/compact` (always summarizes) or another explicit pass. */
export interface CompactionRequest {
  turnId: string;
  history: readonly Message[];
  /** Default `manual`. */
  mode?: CompactionMode;
}

/** The runner: machines interpreted with real actors. */
export interface TurnRunner {
  runTurn(request: TurnRequest, options?: RunOptions): Promise<TurnResult>;
  /**
   * Continues a turn from a checkpoint file (or a checkpoint kept elsewhere); in-flight actors
   * run again (finished provider calls are reused), with the prompt cache's cycle the turn had.
   */
  resumeTurn(
    from: string | Checkpoint,
    options?: RunOptions & {
      /** The history the turn started from: a checkpoint by reference needs it (an older, whole one does not). */
      history?: readonly Message[];
    },
  ): Promise<TurnResult>;
  runCompaction(
    request: CompactionRequest,
    options?: Omit<RunOptions, 'checkpointPath' | 'onCheckpoint'>,
  ): Promise<CompactionReport>;
}
