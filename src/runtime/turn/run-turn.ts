import { createActor, type AnyActorRef } from 'xstate';
import type { TurnInput, TurnOutput } from '../../../machines/index.js';
import { UserError } from '../../core/errors.js';
import { completeClearingPolicy } from '../../projection/clearing-policy.js';
import {
  loadCheckpoint,
  parseCheckpoint,
  saveCheckpoint,
  validatePersistedSnapshot,
  type Checkpoint,
} from '../checkpoint.js';
import { MessageStore } from '../message-store.js';
import { runToOutput } from '../run-to-output.js';
import { toTurnResult } from '../turn-reports.js';
import type { TurnRunnerContext } from '../turn-runner.js';
import type { RunOptions, TurnRequest, TurnResult } from '../turn-runner-types.js';

// A fresh turn and a resumed one differ only in how the actor starts; both are driven the
// same way, so a resumed turn checkpoints and cancels exactly like a fresh one.

/** Runs the turn actor to its result, checkpointing every step when asked and cancelling on abort. */
async function drive(
  ctx: TurnRunnerContext,
  store: MessageStore,
  turnId: string,
  startedAt: number,
  actor: AnyActorRef,
  options: RunOptions,
): Promise<TurnResult> {
  const out = await runToOutput<TurnOutput>(
    actor,
    options.signal,
    () => {
      actor.send({ type: 'turn.cancelled' });
      return undefined;
    },
    () => {
      if (!options.checkpointPath && !options.onCheckpoint) return;
      const checkpoint: Checkpoint = {
        version: 1,
        machine: 'turn',
        turnId,
        startedAt,
        snapshot: actor.getPersistedSnapshot() as Record<string, unknown>,
        store: store.toJSON(),
      };
      if (options.checkpointPath) saveCheckpoint(options.checkpointPath, checkpoint);
      options.onCheckpoint?.(checkpoint);
    },
  );
  actor.stop();
  return toTurnResult(out, store, ctx.clock);
}

/** One turn from its request: a fresh store holding the history and the pending messages. */
export async function runTurn(
  ctx: TurnRunnerContext,
  request: TurnRequest,
  options: RunOptions,
): Promise<TurnResult> {
  const { deps, clock } = ctx;
  const store = new MessageStore();
  const historyRef = store.put(`${request.turnId}:history:input`, request.history);
  const pendingRef =
    request.pending && request.pending.length > 0
      ? store.put(`${request.turnId}:pending`, request.pending)
      : null;
  const startedAt = clock.now();
  const machines = ctx.machinesFor(store, request.previousRequest ?? null, request.cacheCycle ?? null);
  const actor = createActor(machines.turn, {
    input: {
      turnId: request.turnId,
      historyRef,
      pendingRef,
      mode: request.mode,
      strategy: ctx.strategy,
      nativeClients: ctx.nativeClients,
      hierarchical: deps.hierarchical,
      maxOverflowRetries: ctx.maxOverflowRetries,
      retryBackoffMs: deps.retryBackoffMs,
      loopGuard: request.loopGuard,
      loopGuardPolicy: deps.loopGuardPolicy,
      minTurnsPerPass: completeClearingPolicy(deps.policy).clearWhenPassBuysFewerTurns,
      startedAt,
    },
    inspect: deps.inspect,
  });
  const result = await drive(ctx, store, request.turnId, startedAt, actor, options);
  return { ...result, cacheCycle: machines.cacheCycle() };
}

/**
 * Continues a turn from its checkpoint file, where it keeps checkpointing unless told
 * otherwise, or from a checkpoint the caller kept (validated the same way).
 */
export async function resumeTurn(
  ctx: TurnRunnerContext,
  from: string | Checkpoint,
  options: Omit<RunOptions, 'checkpointPath'> & { checkpointPath?: string },
): Promise<TurnResult> {
  const where = typeof from === 'string' ? from : 'checkpoint';
  const checkpoint: Checkpoint =
    typeof from === 'string' ? loadCheckpoint(from) : parseCheckpoint(from, where);
  if (checkpoint.machine !== 'turn')
    throw new UserError(`${where}: checkpoint of a ${checkpoint.machine} run, not a turn`);
  const store = MessageStore.fromJSON(checkpoint.store);
  const machine = ctx.machinesFor(store).turn;
  validatePersistedSnapshot(machine, checkpoint.snapshot, where);
  const actor = createActor(machine, {
    snapshot: checkpoint.snapshot as never,
    // Ignored when a snapshot is given; the persisted context already holds the input.
    input: undefined as unknown as TurnInput,
    inspect: ctx.deps.inspect,
  });
  const checkpointPath = options.checkpointPath ?? (typeof from === 'string' ? from : undefined);
  return drive(ctx, store, checkpoint.turnId, checkpoint.startedAt, actor, {
    ...options,
    ...(checkpointPath ? { checkpointPath } : {}),
  });
}
