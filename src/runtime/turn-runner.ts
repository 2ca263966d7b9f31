import type { AnyActorLogic } from 'xstate';
import type { CompactionStrategy, NativeClients, TurnPolicy } from '../../machines/index.js';
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
  /** The machines provided with actors bound to `store` (one fresh store per run). */
  machinesFor(store: MessageStore): {
    compaction: ReturnType<typeof provideCompaction>;
    turn: ReturnType<typeof provideTurn>;
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
    const compaction = deferredLogic(() =>
      provideCompaction({
        capacity: deps.config.budgets.capacity,
        ...deps.compaction,
        estimator: deps.estimator,
        store,
      }),
    );
    const turn = provideTurn({ ...deps, store, compaction, turnProjection });
    return { compaction, turn };
  };
  return { deps, clock, strategy, nativeClients, turnPolicy: deps.config.turn, machinesFor };
}

/**
 * Actor logic that builds the real logic the first time an actor of it is created or restored,
 * and hands it every call from then on.
 */
function deferredLogic<T extends AnyActorLogic>(make: () => T): T {
  let made: T | undefined;
  const real = () => (made ??= make());
  const logic: Pick<
    AnyActorLogic,
    'transition' | 'start' | 'getInitialSnapshot' | 'restoreSnapshot' | 'getPersistedSnapshot'
  > = {
    transition: (snapshot, event, scope) => real().transition(snapshot, event, scope),
    start: (snapshot, scope) => real().start?.(snapshot, scope),
    getInitialSnapshot: (scope, input) => real().getInitialSnapshot(scope, input),
    restoreSnapshot: (snapshot, scope) => {
      const r = real();
      return r.restoreSnapshot ? r.restoreSnapshot(snapshot, scope) : snapshot;
    },
    getPersistedSnapshot: (snapshot, options) => real().getPersistedSnapshot(snapshot, options),
  };
  return logic as unknown as T;
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
