/**
 * `context-compactor/machines`: the pure XState machine definitions (they do no I/O; every
 * effect is an actor given with `machine.provide()`), and the runners that interpret them
 * with real actors: the turn runner and the local summarizer.
 */
export * from '../../machines/index.js';
export {
  createTurnRunner,
  createLocalSummarizer,
  DEFAULT_REINJECT_BUDGET_TOKENS,
  type TurnRunner,
  type TurnRunnerDeps,
  type TurnRequest,
  type TurnResult,
  type CompactionReport,
  type CompactionRequest,
  type RunOptions,
  type LocalSummarizer,
  type LocalSummarizerOptions,
  type LocalFork,
  type PreparedFork,
  type Clock,
  type InspectOption,
  type TurnActorDeps,
  type CompactionDeps,
  type LocalSummarizerWithWarnings,
  type Checkpoint,
  CheckpointSchema,
  RefCheckpointSchema,
  WholeCheckpointSchema,
  StoreJsonSchema,
  type StoreJson,
} from '../runtime/index.js';
export {
  createStatelyInspector,
  type StatelyInspector,
  type StatelyInspectorOptions,
} from '../runtime/stately-relay.js';
