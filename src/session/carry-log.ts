import { INITIAL_LOOP_GUARD_STATE } from '../../machines/index.js';
import { ActorFailureError } from '../core/errors.js';
import { jsonEqual } from '../formats/residual.js';
import { replayEvents, type SessionStore } from '../store/index.js';
import type { TurnResult } from '../runtime/turn-runner-types.js';
import type { RequestEnvelope } from './parent-context.js';
import type { SessionRoute } from './route.js';
import { buildSessionRunner, type RunnerContext, type TurnCarry } from './session-runner.js';
import { loggedCarry, readLoggedCarry } from './turn-carry.js';

/**
 * A session's carry kept in its own event log, so a session opened again (after a crash, or
 * closed to make room on a server) decides its next turn as one that stayed open. A turn keeps
 * the carry it starts from on the commit line of the write that stores its new messages (no
 * write of its own, the same fsync); a compaction keeps the carry after it with its boundary.
 * On open, a turn that started from the last kept carry and left no boundary is replayed from
 * it: such a turn calls no provider, so its outcome follows from the carry and the history.
 */
export class CarryLog {
  /**
   * The carry that opening the log again reaches: known, or the log's last note as a run left it,
   * checked only when it matters (at close), not on every turn.
   */
  private durable:
    { carry: TurnCarry } | { note: unknown; carry: TurnCarry; replayable: boolean } | undefined;
  /** The turn to replay on open: the events it saw and the carry it started from. */
  private pending: { events: number; carry: TurnCarry } | undefined;

  constructor(private readonly store: SessionStore | undefined) {}

  /** The carry the log kept (a turn's start, until {@link CarryLog.replay} settles it), or undefined. */
  restore(): TurnCarry | undefined {
    const kept = this.store?.keptCarry?.();
    const read = kept && readLoggedCarry(kept.carry);
    if (!kept || !read) return undefined; // none, or unreadable: the next turn starts afresh
    this.durable = { carry: read.carry };
    if (read.startsTurn) this.pending = { events: kept.events, carry: read.carry };
    return read.carry;
  }

  /**
   * Replays the turn that started from the kept carry, once: its result when it ended as an
   * uninterrupted turn would hand on (no compaction, nothing failed), else undefined (the carry
   * it started from stays).
   */
  async replay(ctx: RunnerContext, envelope: RequestEnvelope | undefined): Promise<TurnResult | undefined> {
    const turn = this.pending;
    if (turn === undefined || this.store === undefined) return undefined;
    this.pending = undefined;
    const history = replayEvents(this.store.events().slice(0, turn.events), new Map());
    const quiet = { ...ctx, route: refusingRoute(ctx.route), options: { clock: ctx.options.clock } };
    const { runner } = buildSessionRunner(quiet, envelope, 'automatic');
    const { loopGuard, lastSent, cacheCycle } = turn.carry;
    const result = await runner
      .runTurn({ turnId: 'replay', history, loopGuard, lastSent, cacheCycle })
      .catch(() => undefined);
    const kept =
      result && result.compaction === null && result.decision !== 'failed' && result.decision !== 'cancelled';
    return kept ? result : undefined;
  }

  /** Leaves the last turn unreplayed: the host handed the session a carry of its own. */
  forgetReplay(): void {
    this.pending = undefined;
  }

  /** The note a turn starting from `carry` writes with its messages; undefined when the log already says it. */
  startNote(carry: TurnCarry): unknown {
    if (this.store?.keptCarry === undefined) return undefined;
    const note = loggedCarry(carry, true);
    const kept = this.store.keptCarry();
    const same = kept?.events === this.store.events().length && jsonEqual(kept.carry, note);
    return same ? undefined : note;
  }

  /** The note a write after the turn keeps (a compaction's boundary, a held write's commit). */
  endNote(carry: TurnCarry): unknown {
    return this.store?.keptCarry === undefined ? undefined : loggedCarry(carry, false);
  }

  /** The carry a reopen now reaches is `carry` (the replay of the turn gives it). */
  reached(carry: TurnCarry): void {
    this.durable = { carry };
  }

  /**
   * A run ended handing on `carry`: a reopen reaches it when the log's last note, after every
   * event, keeps it, or is the start of this run and `replayable` (a turn that ended as a
   * replay ends: not failed, not cancelled, not resumed).
   */
  ended(carry: TurnCarry, replayable: boolean): void {
    const kept = this.store?.keptCarry?.();
    const last = kept !== undefined && kept.events === this.store?.events().length;
    this.durable = last ? { note: kept.carry, carry, replayable } : undefined;
  }

  /** The carry, as JSON, that opening the log again reaches, or undefined. */
  private reaches(): string | undefined {
    const d = this.durable;
    if (d === undefined || !('note' in d)) return d && JSON.stringify(d.carry);
    const read = readLoggedCarry(d.note);
    const says = read !== undefined && (read.startsTurn ? d.replayable : jsonEqual(read.carry, d.carry));
    return says ? JSON.stringify(d.carry) : undefined;
  }

  /**
   * Keeps `carry` at close when a reopen would not reach it. Only where writes are made at
   * once: a server's queued store may remove its directory right after closing.
   */
  close(carry: TurnCarry): void {
    const store = this.store;
    if (store?.keptCarry === undefined || store.flush !== undefined || this.pending !== undefined) return;
    const text = JSON.stringify(carry);
    const initial =
      carry.lastSent == null &&
      carry.cacheCycle == null &&
      jsonEqual(carry.loopGuard, INITIAL_LOOP_GUARD_STATE);
    const durable = this.reaches();
    if (text === durable || (initial && durable === undefined)) return;
    try {
      store.appendMessages([], { carry: loggedCarry(carry, false) });
    } catch {
      // Best effort: without it the next opening starts from the last carry the log kept.
    }
  }
}

/** The route with every provider call refused: a replayed turn must not call one. */
function refusingRoute(route: SessionRoute): SessionRoute {
  const refuse = () =>
    Promise.reject(new ActorFailureError('provider', 'no provider call while replaying a turn'));
  const { standalone, inline, summary } = route;
  return {
    ...route,
    summary: { provider: summary.provider, model: summary.model, summarize: refuse },
    ...(standalone
      ? { standalone: { provider: standalone.provider, model: standalone.model, compactStandalone: refuse } }
      : {}),
    ...(inline ? { inline: { provider: inline.provider, model: inline.model, compactInline: refuse } } : {}),
  };
}
