import { runCompaction } from './compaction/run-compaction.js';
import { resumeTurn, runTurn } from './turn/run-turn.js';
import { createTurnRunnerContext } from './turn-runner-context.js';
import type { TurnRunner, TurnRunnerDeps } from './turn-runner-types.js';

/**
 * Creates a turn runner. The machines are provided once per run with actors bound to a fresh
 * {@link MessageStore}; nothing is shared between turns except what the caller passes in.
 */
export function createTurnRunner(deps: TurnRunnerDeps): TurnRunner {
  const ctx = createTurnRunnerContext(deps);
  return {
    runTurn: (request, options = {}) => runTurn(ctx, request, options),
    resumeTurn: (checkpointPath, options = {}) => resumeTurn(ctx, checkpointPath, options),
    runCompaction: (request, options = {}) => runCompaction(ctx, request, options),
  };
}
