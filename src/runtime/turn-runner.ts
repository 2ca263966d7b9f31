import {
  compactionMachine,
  type CompactionStrategy,
  type NativeClients,
  type TurnPolicy,
} from '../../machines/index.js';
import { delegatedLogic } from './delegated-logic.js';
import { provideCompaction } from './compaction/compaction.implementations.js';
import { runCompaction } from './compaction/run-compaction.js';
import type { MessageStore } from './message-store.js';
import { resumeTurn, runTurn } from './turn/run-turn.js';
import { provideTurn } from './turn/turn.implementations.js';
import { createTurnProjection } from './turn/turn-projection.js';
import type { Clock, TurnRunner, TurnRunnerDeps } from './turn-runner-types.js';

/**
 * What every run of one runner shares, resolved once from its deps so runTurn, resumeTurn and
 * runCompaction agree on the strategy, the retries and the budgets.
 */
export interface TurnRunnerContext {
  deps: TurnRunnerDeps;
  clock: Clock;
  /** The route's strategy, as asked for. */
  strategy: CompactionStrategy;
  /** Which native clients the route has (the machines decide what a missing one means). */
  nativeClients: NativeClients;
  /** The numbers every turn decides by (threshold, budgets, the compaction wait), resolved once. */
  turnPolicy: TurnPolicy;
  /**
   * The machines with actors bound to `store` (one fresh store per run); `release` ends the
   * binding once the run has ended.
   */
  machinesFor(store: MessageStore): {
    compaction: ReturnType<typeof provideCompaction>;
    turn: ReturnType<typeof provideTurn>['machine'];
    release(): void;
  };
}

function createTurnRunnerContext(deps: TurnRunnerDeps): TurnRunnerContext {
  const clock = deps.clock ?? { now: () => Date.now() };
  const strategy = deps.strategy ?? 'local';
  // Facts for the compaction machine, which picks Local when the strategy's client is missing.
  const nativeClients = { standalone: !!deps.compaction.standalone, inline: !!deps.compaction.inline };
  const turnProjection = createTurnProjection(deps);
  const machinesFor = (store: MessageStore) => {
    // Most turns never compact: the compaction machines (four of them) are built only when one
    // is started, not with every turn.
    let made: ReturnType<typeof provideCompaction> | undefined;
    const compaction = delegatedLogic(
      compactionMachine,
      () =>
        (made ??= provideCompaction({
          capacity: deps.config.budgets.capacity,
          ...deps.compaction,
          estimator: deps.estimator,
          store,
        })),
    );
    // The turn machine is one kept between runs: `release` hands it back once the run has ended.
    const { machine: turn, release } = provideTurn({ ...deps, store, compaction, turnProjection });
    return { compaction, turn, release };
  };
  return { deps, clock, strategy, nativeClients, turnPolicy: deps.config.turn, machinesFor };
}

/**
 * Creates a turn runner. The machines are provided once per run with actors bound to a fresh
 * {@link MessageStore}; nothing is shared between turns except what the caller passes in.
 */
export function createTurnRunner(deps: TurnRunnerDeps): TurnRunner {
  const ctx = createTurnRunnerContext(deps);
  return {
    runTurn: (request, options = {}) => runTurn(ctx, request, options),
    resumeTurn: (from, options = {}) => resumeTurn(ctx, from, options),
    runCompaction: (request, options = {}) => runCompaction(ctx, request, options),
  };
}
