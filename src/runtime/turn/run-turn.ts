import { createActor, type AnyActorRef } from 'xstate';
import type { TurnGiven, TurnInput, TurnOutput, TurnPolicy } from '../../../machines/index.js';
import { UserError } from '../../core/errors.js';
import type { Message } from '../../messages/message.js';
import {
  loadCheckpoint,
  parseCheckpoint,
  validatePersistedSnapshot,
  type Checkpoint,
} from '../checkpoint.js';
import { decodeList, historyPrint } from '../checkpoint-refs.js';
import { decodeWritten } from '../checkpoint-written.js';
import { MessageStore } from '../message-store.js';
import { runToOutput } from '../run-to-output.js';
import { toTurnResult } from '../turn-reports.js';
import type { TurnRunnerContext } from '../turn-runner.js';
import type {
  ResumeOptions,
  RunOptions,
  SentMessages,
  TurnRequest,
  TurnResult,
} from '../turn-runner-types.js';
import { keepLastRequest, keptLastRequest } from './last-request.js';
import { TurnCheckpoints } from './turn-checkpoints.js';

// A fresh turn and a resumed one differ only in how the actor starts; both are driven the
// same way, so a resumed turn checkpoints and cancels exactly like a fresh one.

/** The store ref of the history a turn starts from. */
const inputRef = (turnId: string) => `${turnId}:history:input`;

/** Runs the turn actor to its result, checkpointing when asked and cancelling on abort. */
async function drive(
  ctx: TurnRunnerContext,
  store: MessageStore,
  actor: AnyActorRef,
  options: RunOptions,
  checkpoints: TurnCheckpoints,
): Promise<TurnResult> {
  // A checkpoint that cannot be written ends the run: the actor stops (aborting any provider call).
  checkpoints.failed.catch(() => actor.stop());
  let out: TurnOutput;
  try {
    out = await Promise.race([
      runToOutput<TurnOutput>(
        actor,
        options.signal,
        () => {
          actor.send({ type: 'turn.cancelled' });
          return undefined;
        },
        () => checkpoints.offer(actor),
      ),
      checkpoints.failed,
    ]);
  } catch (e) {
    // No checkpoint write may land after the caller has seen the turn fail (and put its file back).
    actor.stop();
    await checkpoints.flush().catch(() => undefined);
    throw e;
  }
  actor.stop();
  await checkpoints.flush();
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
  const historyRef = store.put(inputRef(request.turnId), request.history);
  const pendingRef =
    request.pending && request.pending.length > 0
      ? store.put(`${request.turnId}:pending`, request.pending)
      : null;
  if (request.lastRequest) keepLastRequest(store, request.turnId, request.lastRequest);
  const startedAt = clock.now();
  const machines = ctx.machinesFor(store);
  const actor = createActor(machines.turn, {
    input: {
      turnId: request.turnId,
      historyRef,
      pendingRef,
      mode: request.mode,
      strategy: ctx.strategy,
      nativeClients: ctx.nativeClients,
      hierarchical: deps.hierarchical,
      maxOverflowRetries: deps.config.limits.routePolicy?.maxOverflowRetries,
      retryBackoffMs: deps.config.compaction.retryBackoffMs,
      loopGuard: request.loopGuard,
      loopGuardPolicy: deps.config.loopGuard,
      minTurnsPerPass: deps.config.policy.clearWhenPassBuysFewerTurns,
      policy: ctx.turnPolicy,
      cacheCycle: request.cacheCycle ?? null,
      lastSent: request.lastSent ?? null,
      startedAt,
    },
    inspect: deps.inspect,
  });
  const checkpoints = new TurnCheckpoints({
    turnId: request.turnId,
    startedAt,
    store,
    baseRef: historyRef,
    path: options.checkpointPath,
    onCheckpoint: options.onCheckpoint,
    beforeFirstWrite: options.beforeFirstCheckpoint,
  });
  return drive(ctx, store, actor, options, checkpoints).finally(machines.release);
}

/** The message store a checkpoint holds (whole), or refers to over `history` (by reference). */
function storeOf(
  checkpoint: Checkpoint,
  history: readonly Message[] | undefined,
  where: string,
): MessageStore {
  if (checkpoint.version === 1) return MessageStore.fromJSON(checkpoint.store);
  const { base } = checkpoint;
  if (!history)
    throw new UserError(
      `${where}: the checkpoint refers to the session history it started from (${base.count} messages); resume it with that history`,
    );
  if (history.length !== base.count || historyPrint(history) !== base.print)
    throw new UserError(
      `${where}: the checkpoint was taken on another session history (${base.count} messages, this one has ${history.length}); it cannot be resumed on this one`,
    );
  const written = decodeWritten(checkpoint.written, checkpoint.writtenRefs, history, checkpoint.texts);
  if (typeof written === 'string') throw new UserError(`${where}: invalid checkpoint at ${written}`);
  const messages: Record<string, Message[]> = { [base.ref]: [...history] };
  for (const [ref, list] of Object.entries(checkpoint.lists)) {
    const decoded = decodeList(list, history, written);
    if (!decoded)
      throw new UserError(`${where}: invalid checkpoint at lists.${ref}: a run lies outside the history`);
    messages[ref] = decoded;
  }
  return MessageStore.from({ messages, texts: checkpoint.texts, results: checkpoint.results });
}

/** A turn's checkpoint, read and checked as a resume reads it. */
function turnCheckpoint(from: string | Checkpoint): { checkpoint: Checkpoint; where: string } {
  const where = typeof from === 'string' ? from : 'checkpoint';
  const checkpoint: Checkpoint =
    typeof from === 'string' ? loadCheckpoint(from) : parseCheckpoint(from, where);
  if (checkpoint.machine !== 'turn')
    throw new UserError(`${where}: checkpoint of a ${checkpoint.machine} run, not a turn`);
  return { checkpoint, where };
}

/**
 * The last request sent that a turn's checkpoint holds (its summary asks over it), or undefined
 * when it holds none: nothing was sent before the turn, or an older version wrote it.
 */
export function checkpointLastRequest(
  from: string | Checkpoint,
  history: readonly Message[] | undefined,
): SentMessages | undefined {
  const { checkpoint, where } = turnCheckpoint(from);
  return keptLastRequest(storeOf(checkpoint, history, where), checkpoint.turnId);
}

/**
 * Continues a turn from its checkpoint file, where it keeps checkpointing unless told
 * otherwise, or from a checkpoint the caller kept (validated the same way). A checkpoint by
 * reference needs the session history the turn started from (`options.history`). The turn's
 * context holds the prompt cache's cycle and the last request sent, so it decides as it would
 * have, and returns both for the next turn.
 */
export async function resumeTurn(
  ctx: TurnRunnerContext,
  from: string | Checkpoint,
  options: ResumeOptions,
): Promise<TurnResult> {
  const { checkpoint, where } = turnCheckpoint(from);
  const check = ctx.machinesFor(new MessageStore());
  try {
    validatePersistedSnapshot(check.turn, checkpoint.snapshot, where);
  } finally {
    check.release();
  }
  const store = storeOf(checkpoint, options.history, where);
  const machines = ctx.machinesFor(store);
  const actor = createActor(machines.turn, {
    snapshot: upgradedSnapshot(checkpoint, ctx.turnPolicy) as never,
    // Ignored when a snapshot is given; the persisted context already holds the input.
    input: undefined as unknown as TurnInput,
    inspect: ctx.deps.inspect,
  });
  const checkpointPath = options.checkpointPath ?? (typeof from === 'string' ? from : undefined);
  const baseRef = checkpoint.version === 1 ? inputRef(checkpoint.turnId) : checkpoint.base.ref;
  const checkpoints = new TurnCheckpoints({
    turnId: checkpoint.turnId,
    startedAt: checkpoint.startedAt,
    store,
    baseRef: store.lists().has(baseRef) ? baseRef : firstRef(store),
    path: checkpointPath,
    onCheckpoint: options.onCheckpoint,
    beforeFirstWrite: options.beforeFirstCheckpoint,
  });
  return drive(ctx, store, actor, options, checkpoints).finally(machines.release);
}

/** The keys of a turn's context that an older version kept beside the others instead of under `given`. */
const GIVEN_KEYS = {
  turnId: true,
  mode: true,
  strategy: true,
  nativeClients: true,
  hierarchical: true,
  maxOverflowRetries: true,
  retryBackoffMs: true,
  startedAt: true,
  pendingRef: true,
  minTurnsPerPass: true,
  loopGuard: true,
  loopGuardPolicy: true,
  policy: true,
} satisfies Record<keyof TurnGiven, true>;

/**
 * The machine snapshot of a checkpoint. The turn's context holds its policy, the prompt cache's
 * cycle and the last request sent; a checkpoint from an older version kept the cycle beside the
 * snapshot and none of the others, which get the runner's policy and "no request sent". What
 * the turn was given sits under `given`; older versions kept it beside the rest.
 */
function upgradedSnapshot(checkpoint: Checkpoint, policy: TurnPolicy): unknown {
  const snapshot = checkpoint.snapshot as { context?: Record<string, unknown> };
  if (!snapshot.context || 'given' in snapshot.context) return snapshot;
  let flat = snapshot.context;
  if (!('policy' in flat)) {
    const cacheCycle = checkpoint.version === 1 ? null : (checkpoint.cacheCycle ?? null);
    flat = { cacheCycle, lastSent: null, projectionSent: null, ...flat, policy };
  }
  const given: Record<string, unknown> = {};
  const context: Record<string, unknown> = { given };
  for (const [key, value] of Object.entries(flat))
    (Object.hasOwn(GIVEN_KEYS, key) ? given : context)[key] = value;
  return { ...snapshot, context };
}

/** Some list of the store, as the base of an old checkpoint that lacks the turn's input. */
function firstRef(store: MessageStore): string {
  const [ref] = store.lists().keys();
  return ref ?? store.put('history:empty', []);
}
