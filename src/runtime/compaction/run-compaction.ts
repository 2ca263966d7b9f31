import { createActor } from 'xstate';
import type { CompactionOutput } from '../../../machines/index.js';
import { MessageStore } from '../message-store.js';
import { runToOutput } from '../run-to-output.js';
import { toCompactionReport } from '../turn-reports.js';
import type { TurnRunnerContext } from '../turn-runner.js';
import type { CompactionReport, CompactionRequest, RunOptions } from '../turn-runner-types.js';
import { CancelledError } from '../../core/errors.js';

/**
 * One explicit compaction pass (manual `/compact`, a model switch) outside a turn. It is not
 * checkpointed, and aborting stops it at once: the pass is rejected with the abort's reason.
 */
export async function runCompaction(
  ctx: TurnRunnerContext,
  request: CompactionRequest,
  options: Omit<RunOptions, 'checkpointPath'>,
): Promise<CompactionReport> {
  const { deps, clock } = ctx;
  const store = new MessageStore();
  const historyRef = store.put(`${request.turnId}:history:input`, request.history);
  const { budgets, limits, compaction } = deps.config;
  const machines = ctx.machinesFor(store);
  // Only the compaction machine runs here.
  machines.release();
  const actor = createActor(machines.compaction, {
    input: {
      turnId: request.turnId,
      mode: request.mode ?? 'manual',
      strategy: ctx.strategy,
      nativeClients: ctx.nativeClients,
      historyRef,
      itemsBefore: request.history.length,
      compactableItems: deps.compaction.summarizer?.compactable?.(request.history),
      hierarchical: deps.hierarchical,
      budget: budgets.summaryInputBudget,
      maxOverflowRetries: limits.routePolicy?.maxOverflowRetries,
      retryBackoffMs: compaction.retryBackoffMs,
      startedAt: clock.now(),
    },
    inspect: deps.inspect,
  });
  const out = await runToOutput<CompactionOutput>(
    actor,
    options.signal,
    () => {
      actor.stop(); // stopping aborts the in-flight provider call's signal
      return options.signal?.reason ?? new CancelledError('compaction cancelled');
    },
    () => undefined,
  );
  actor.stop();
  return toCompactionReport(out, store, clock);
}
