import type { CompactionStrategy } from '../../machines/index.js';
import type { Message } from '../messages/message.js';
import { effectiveLimits } from '../projection/effective-limits.js';
import type { Budgets } from '../projection/budgets.js';
import type { CacheCycle } from '../projection/wait-by-cost.js';
import { provideCompaction } from './compaction-actors.js';
import type { MessageStore } from './message-store.js';
import { provideTurn } from './turn-actors.js';
import { DEFAULT_PROJECTION } from './turn-actor-deps.js';
import { createTurnProjection } from './turn-projection.js';
import type { Clock, TurnRunnerDeps } from './turn-runner-types.js';

/**
 * What every run of one runner shares, resolved once from its deps so runTurn, resumeTurn and
 * runCompaction agree on the strategy, the retries and the budgets.
 */
export interface TurnRunnerContext {
  deps: TurnRunnerDeps;
  clock: Clock;
  strategy: CompactionStrategy;
  maxOverflowRetries: number | undefined;
  /** The budgets of the limits as they are now (read at each use, never cached). */
  budgetsNow(): Budgets;
  /** The machines provided with actors bound to `store` (one fresh store per run). */
  machinesFor(
    store: MessageStore,
    previousRequest?: readonly Message[] | null,
    cacheCycle?: CacheCycle | null,
  ): {
    compaction: ReturnType<typeof provideCompaction>;
    turn: ReturnType<typeof provideTurn>;
    /** The prompt cache's cycle after the turn's requests, for the next turn. */
    cacheCycle(): CacheCycle | null;
  };
}

/** The route's strategy, or Local when the client that strategy needs is missing (S1). */
function availableStrategy(deps: TurnRunnerDeps): CompactionStrategy {
  return deps.strategy === 'nativeStandalone' && !deps.compaction.standalone
    ? 'local'
    : deps.strategy === 'nativeInline' && !deps.compaction.inline
      ? 'local'
      : (deps.strategy ?? 'local');
}

export function createTurnRunnerContext(deps: TurnRunnerDeps): TurnRunnerContext {
  const clock = deps.clock ?? { now: () => Date.now() };
  const strategy = availableStrategy(deps);
  const maxOverflowRetries = deps.maxOverflowRetries ?? deps.limits.routePolicy?.maxOverflowRetries;
  const budgetsNow = () => DEFAULT_PROJECTION.resolveBudgets(effectiveLimits(deps.limits, deps.policy));
  const machinesFor = (
    store: MessageStore,
    previousRequest: readonly Message[] | null = null,
    cacheCycle: CacheCycle | null = null,
  ) => {
    const compaction = provideCompaction(
      { capacity: budgetsNow().capacity, ...deps.compaction, estimator: deps.estimator },
      store,
    );
    const tp = createTurnProjection(deps, previousRequest, cacheCycle);
    return { compaction, turn: provideTurn(deps, store, compaction, tp), cacheCycle: tp.cacheCycle };
  };
  return { deps, clock, strategy, maxOverflowRetries, budgetsNow, machinesFor };
}
