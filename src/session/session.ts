import { join } from 'node:path';
import { z } from 'zod';
import { INITIAL_LOOP_GUARD_STATE, type CompactionMode, type LoopGuardState } from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import { usageAnchor, type UsageAnchor } from '../estimate/usage-anchor.js';
import type { Message } from '../messages/message.js';
import { heldMessage } from '../messages/held-text.js';
import { validatedCopies } from './plain-message.js';
import { answerRecall, RECALL_TOOL, type Limits } from '../projection/index.js';
import { SNAPSHOTS_DIR, settleFinishedFsyncs, type BoundaryInfo } from '../store/index.js';
import {
  createCacheHealthMonitor,
  type CacheHealthMonitor,
  type CacheUsage,
  type CacheUsageVerdict,
} from './cache-health.js';
import { resolveConfig, type ResolvedSessionConfig } from './config.js';
import { parseOrThrow, SessionOptionsSchema, type CompactorSessionOptions } from './options.js';
import type { RequestEnvelope } from './parent-context.js';
import { describeCompaction, sessionTurnResult, type SessionCompactionReport } from './report.js';
import { resolveSessionRoute, withSummarizer, type SessionRoute } from './route.js';
import { buildSessionRunner, type CacheCarry, type RunnerContext, type TurnCarry } from './session-runner.js';
import type {
  CompactOptions,
  CompactorSession,
  PrepareRequestOptions,
  PreparedRequest,
  SessionTurnOptions,
  SessionTurnResult,
} from './session-types.js';
import {
  openStoredHistory,
  storeSource,
  type CompactionToRecord,
  type StoredHistory,
} from './stored-history.js';
import { prepareNextRequest, type TurnRequestMemo } from './next-request.js';
import { checkpointKeeper } from './checkpoint-guard.js';
import { CarryLog } from './carry-log.js';
import { checkpointLastRequest } from '../runtime/turn/run-turn.js';
import type { SentMessages, TurnResult } from '../runtime/turn-runner-types.js';
import { SessionBusyError, WindowTooSmallError } from '../core/errors.js';
import { heldTurn, holdTurn, settleHeld, writeHeld, type HeldTurn, type SessionMark } from './held-turn.js';

/** A change of settings: the groups given replace the session's. */
const SettingsChangeSchema = z.strictObject({
  limits: SessionOptionsSchema.shape.limits,
  policy: SessionOptionsSchema.shape.policy,
});

const CompactOptionsSchema = z.strictObject({
  mode: z.enum(['manual', 'automatic', 'recovery', 'targeted', 'modelSwitch']).optional(),
  instructions: z.string().optional(),
  previousModel: z.string().min(1).optional(),
  signal: z.instanceof(AbortSignal).optional(),
  beforeCommit: z
    .custom<CompactOptions['beforeCommit']>((v) => typeof v === 'function', 'expected a function')
    .optional(),
});

/**
 * Creates a session: resolves the route (offline by default), opens the durable store when
 * `sessionDir` is given (a session already there is continued), and wires projection, the
 * turn runner and the local summarizer together. Invalid options throw a one-line
 * `UserError`; route problems a `RouteError`.
 */
export function createCompactorSession(options: CompactorSessionOptions = {}): CompactorSession {
  return new Session(options);
}

/**
 * The one composition root of the library and the CLI (see {@link CompactorSession}). A host
 * that runs sessions durably passes `wrapProviderClients` to record every provider call.
 */
export class Session implements CompactorSession {
  readonly estimator: Estimator;
  readonly cacheHealth: CacheHealthMonitor;
  readonly resumedFrom: number;
  private readonly ctx: RunnerContext;
  private data: z.infer<typeof SessionOptionsSchema>;
  private readonly stored: StoredHistory | null;
  private readonly log: (line: string) => void;
  private live: readonly Message[];
  private envelope: RequestEnvelope | undefined;
  // Last provider-reported usage, the pressure anchor; a compaction replaces the request so it stops matching.
  private anchor: UsageAnchor | undefined;
  private guard: LoopGuardState = { ...INITIAL_LOOP_GUARD_STATE };
  /** The request after the last turn and the cache cycle: compaction may wait while the next one extends it. */
  private lastTurn: CacheCarry = {};
  /** The request the last turn built, and the history it was built from (see prepareRequest). */
  private lastRequest: TurnRequestMemo | undefined;
  // The messages of the last request sent (a turn's own, or one whose usage was recorded): a
  // summary by the same model asks over them so the provider's prompt cache serves them.
  private sent: readonly Message[] | undefined;
  /** The provider's count of that request's input (system prompt and tools included), when it reported one. */
  private sentTokens: number | undefined;
  private busy = false;
  private turns = 0;
  /** The turn running with `held`, while it runs. */
  private holding: HeldTurn | undefined;
  /** A held turn that ran and waits for {@link Session.settleTurn}. */
  private held: HeldTurn | undefined;
  /** The histories compactions replaced (without a store, the only copy of what they dropped). */
  private readonly replaced: (readonly Message[])[] = [];
  readonly recallTool = RECALL_TOOL;

  constructor(options: CompactorSessionOptions, wrapProviderClients = (route: SessionRoute) => route) {
    const data = parseOrThrow(SessionOptionsSchema, options, 'createCompactorSession: options');
    const base = resolveSessionRoute(data.route ?? { provider: 'offline' }, options.estimator, options.http);
    const route = wrapProviderClients(
      withSummarizer(base, options.summarizer, options.standalone, options.inline),
    );
    this.data = data;
    this.estimator = route.estimator;
    this.ctx = {
      route,
      estimator: route.estimator,
      config: resolveConfig(data, route, data.envelope, route.estimator),
      hierarchical: data.hierarchical,
      options,
    };
    this.cacheHealth = createCacheHealthMonitor(options.cacheHealth);
    this.log = options.log ?? (() => undefined);
    this.envelope = data.envelope;
    const source = storeSource(options);
    this.stored = source
      ? openStoredHistory({
          source,
          startOver: data.startOver,
          history: data.history,
          writes: data.storeWrites ?? 'immediate',
        })
      : null;
    this.live = this.stored ? this.stored.history : (data.history ?? []);
    this.resumedFrom = this.stored?.resumedFrom ?? 0;
    this.carryLog = new CarryLog(this.stored?.store);
    const kept = this.carryLog.restore();
    if (kept) this.continueFrom(kept);
  }

  /** The carry kept in the session's event log (see carry-log.ts). */
  private readonly carryLog: CarryLog;

  /** Settles the carry of a turn the log says started and did not end (replayed once, before the first run). */
  private async settleCarry(): Promise<void> {
    const replayed = await this.carryLog.replay(this.ctx, this.envelope);
    if (!replayed) return;
    this.handOn(replayed);
    this.carryLog.reached(this.carry);
    if (replayed.request !== null) [this.sent, this.sentTokens] = [replayed.request, undefined];
  }

  get history(): readonly Message[] {
    return this.live;
  }
  get route(): CompactorSession['route'] {
    const { summary: _s, standalone: _n, inline: _i, estimator: _e, secrets: _k, ...facts } = this.ctx.route;
    return facts;
  }
  get config(): ResolvedSessionConfig {
    return this.ctx.config;
  }
  get limits(): Limits {
    return this.ctx.config.limits;
  }
  get budgets() {
    return this.ctx.config.budgets;
  }
  get store() {
    return this.stored?.store ?? null;
  }
  get loopGuard(): LoopGuardState {
    return this.guard;
  }

  append(...messages: Message[]): void {
    if (this.busy)
      throw new SessionBusyError('compactor session is busy; append must wait for the running turn');
    void this.appendValidated(validatedCopies(messages, 'append: message'));
  }

  setEnvelope(next: RequestEnvelope | undefined): void {
    this.envelope =
      next === undefined
        ? undefined
        : parseOrThrow(SessionOptionsSchema.shape.envelope, next, 'setEnvelope: envelope');
    this.ctx.config = resolveConfig(this.data, this.ctx.route, this.envelope, this.estimator);
  }

  configure(settings: Pick<CompactorSessionOptions, 'limits' | 'policy'>): void {
    if (this.busy)
      throw new SessionBusyError('compactor session is busy; configure must wait for the running turn');
    const change = parseOrThrow(SettingsChangeSchema, settings, 'configure: settings');
    this.data = { ...this.data, ...change };
    this.ctx.config = resolveConfig(this.data, this.ctx.route, this.envelope, this.estimator);
  }

  prepareRequest(opts: PrepareRequestOptions = {}): PreparedRequest {
    return prepareNextRequest({
      history: this.live,
      config: this.ctx.config,
      estimator: this.estimator,
      anchor: this.anchor,
      lastTurn: this.lastRequest,
      options: opts,
    });
  }

  recordUsage(usage: CacheUsage, request: readonly Message[]): CacheUsageVerdict {
    const verdict = this.cacheHealth.recordUsage(usage);
    this.anchor = usageAnchor(request, usage.inputTokens);
    this.sent = request;
    this.sentTokens = usage.inputTokens;
    return verdict;
  }

  /**
   * Tells a session opened afresh (a Restate object opens one per call) the last request that
   * was sent, and the provider's count of it when known: a summary by the same model asks over it.
   */
  rememberSent(request: readonly Message[], providerTokens?: number): void {
    [this.sent, this.sentTokens] = [request, providerTokens];
  }

  /**
   * What the turns so far hand the next one (the loop guard, the request the last turn ended
   * with, the prompt cache's cycle), for a host that opens the session afresh for every call.
   */
  get carry(): TurnCarry {
    return { loopGuard: this.guard, ...this.lastTurn };
  }

  /** Continues from what an earlier opening of this session handed on ({@link Session.carry}). */
  carryOn(carry: TurnCarry): void {
    this.carryLog.forgetReplay(); // the host's carry wins over the one the log would give
    this.continueFrom(carry);
  }

  private continueFrom({ loopGuard, ...cache }: TurnCarry): void {
    [this.guard, this.lastTurn] = [{ ...loopGuard }, cache];
  }

  /** The last request sent, as a summary would extend it. */
  private sentMessages(): SentMessages | undefined {
    return this.sent && { messages: this.sent, providerTokens: this.sentTokens };
  }

  /** The machines for one run; a summary may extend the last request sent. */
  private runnerFor(mode: CompactionMode, instructions?: string, sent = this.sentMessages()) {
    return buildSessionRunner(this.ctx, this.envelope, mode, instructions, sent);
  }

  /** The last request sent that the turn's summary extends: a resumed turn's own, which its checkpoint keeps. */
  private async turnSent(opts: SessionTurnOptions, before: readonly Message[], synced: Promise<void>) {
    const from = opts.resumeFrom;
    if (!from) return this.sentMessages();
    return this.orRollback(async () => checkpointLastRequest(from, before)).catch(async (e: unknown) => {
      await this.landed(synced).catch(() => undefined);
      throw e;
    });
  }

  runTurn(opts: SessionTurnOptions = {}): Promise<SessionTurnResult> {
    return this.exclusive('runTurn', async () => {
      if (this.held !== undefined) throw new SessionBusyError('compactor session holds an unsettled turn');
      if (opts.held !== true) return this.turn(opts);
      await this.settleCarry(); // before the mark: a replayed carry is the session's, whatever the turn
      this.holding = heldTurn(this.mark());
      return holdTurn(this.holding, () => this.turn(opts), {
        keep: (held) => (this.held = held),
        restore: (mark) => this.restore(mark),
        done: () => (this.holding = undefined),
      });
    });
  }

  /**
   * Ends a turn run with `held`: kept, its messages and compaction go to the store (the promise
   * resolves once they are durable); dropped, the session is exactly as before the turn.
   */
  async settleTurn(kept: boolean): Promise<void> {
    const held = this.held;
    this.held = undefined;
    const restore = (mark: SessionMark) => this.restore(mark);
    const to = { stored: this.stored, health: this.cacheHealth, restore, log: this.carryLog };
    if (held) await settleHeld(held, kept, { ...to, carry: () => this.carry });
  }

  private mark(): SessionMark {
    const { live, guard, lastTurn, lastRequest, sent, sentTokens, anchor } = this;
    return { live, guard, lastTurn, lastRequest, sent, sentTokens, anchor, replaced: this.replaced.length };
  }

  /** Puts the mark back; what a held turn wrote without a commit line is cut off the log. */
  private restore(m: SessionMark): void {
    this.stored?.store.rollback();
    [this.live, this.guard, this.lastTurn, this.lastRequest] = [m.live, m.guard, m.lastTurn, m.lastRequest];
    [this.sent, this.sentTokens, this.anchor] = [m.sent, m.sentTokens, m.anchor];
    this.replaced.length = m.replaced;
  }

  private turn(opts: SessionTurnOptions): Promise<SessionTurnResult> {
    return (async () => {
      // Pending messages are conversation facts: stored before the turn may compact them. Their
      // fsync runs while the turn works; the turn waits for it before it records or returns anything.
      const { synced } = await this.storePending(opts);
      const before = this.live;
      const sent = await this.turnSent(opts, before, synced);
      const { runner, summarizer } = this.runnerFor('automatic', undefined, sent);
      const { run, restoreCheckpoint } = this.checkpointing(opts);
      if (this.holding) this.holding.restoreCheckpoint = restoreCheckpoint;
      const result = await this.orRollback(() => {
        const turnId = `turn-${++this.turns}`;
        if (opts.resumeFrom) return runner.resumeTurn(opts.resumeFrom, { ...run, history: before });
        const request = { turnId, history: before, loopGuard: this.guard, ...this.lastTurn }; // mode: automatic
        return runner.runTurn(sent ? { ...request, lastRequest: sent } : request, run);
      }).catch(async (e: unknown) => {
        await this.landed(synced).catch(() => undefined);
        // A window too small for the fixed part of a request is a configuration error found
        // during the turn: like any refused turn it leaves no checkpoint to resume.
        if (WindowTooSmallError.isInstance(e)) await restoreCheckpoint();
        throw e;
      });
      await this.landed(synced).catch(async (e: unknown) => {
        await restoreCheckpoint();
        throw e;
      });
      if (result.decision === 'cancelled') {
        // Aborted (Ctrl-C, SIGTERM, the caller's signal): nothing of the turn is kept.
        this.dropRun();
        await restoreCheckpoint();
        return sessionTurnResult(result, null, summarizer, false);
      }
      const turnRequest = result.request;
      if (result.compaction?.status === 'failed')
        this.log(
          `automatic compaction failed; continuing with full history: ${result.compaction.failure?.message}`,
        );
      if (result.decision === 'failed') {
        this.handOn(result); // the loop guard counts failed turns
        this.dropRun();
        return sessionTurnResult(result, null, summarizer, false);
      }
      // A refused commit (--out cannot be written) keeps nothing, checkpoint and hand-on included.
      await this.orRollback(async () => {
        try {
          await opts.beforeCommit?.(result);
        } catch (e) {
          await restoreCheckpoint();
          throw e;
        }
      });
      this.handOn(result);
      const c = result.decision === 'compacted' ? result.compaction : null;
      const boundary = this.commit(
        c
          ? { before, after: result.history, mode: 'automatic', strategy: c.strategy, receipt: c.receipt }
          : undefined,
      );
      this.carryLog.ended(this.carry, !opts.resumeFrom);
      const local = c?.strategy === 'local';
      this.lastRequest = turnRequest === null ? undefined : { history: this.live, request: turnRequest };
      if (turnRequest !== null) [this.sent, this.sentTokens] = [turnRequest, undefined];
      return sessionTurnResult(result, boundary, summarizer, local);
    })();
  }

  /**
   * Stores a turn's pending messages, their fsync left running; the same write keeps the carry
   * the turn starts from (see carry-log.ts).
   */
  private async storePending(opts: SessionTurnOptions): Promise<{ synced: Promise<void> }> {
    const pending = validatedCopies(opts.pending ?? [], 'runTurn: pending');
    await this.settleCarry();
    const note = opts.resumeFrom ? undefined : this.carryLog.startNote(this.carry);
    // A held turn keeps that note on the commit line that keeps it (see settleTurn).
    if (this.holding) this.holding.start = note;
    return { synced: this.appendValidated(pending, true, note) };
  }

  /** A failed or cancelled turn: what it held back is dropped, and a reopen would not replay its carry. */
  private dropRun(): void {
    this.rollback();
    this.carryLog.ended(this.carry, false);
  }

  /**
   * How a turn checkpoints: with a store every step from the compaction pass on is written
   * atomically, so a killed turn can be resumed; `restoreCheckpoint` puts back the file the
   * turn replaced, for a turn that keeps nothing.
   */
  private checkpointing(opts: SessionTurnOptions) {
    const checkpointPath = this.stored?.store.dir
      ? join(this.stored.store.dir, SNAPSHOTS_DIR, 'turn.json')
      : undefined;
    const keeper = checkpointPath ? checkpointKeeper(checkpointPath) : null;
    const run = {
      signal: opts.signal,
      ...(checkpointPath && keeper ? { checkpointPath, beforeFirstCheckpoint: keeper.keep } : {}),
      ...(opts.onCheckpoint ? { onCheckpoint: opts.onCheckpoint } : {}),
    };
    return { run, restoreCheckpoint: async () => keeper?.restore() };
  }

  compact(opts: CompactOptions = {}): Promise<SessionCompactionReport> {
    const o = parseOrThrow(CompactOptionsSchema, opts, 'compact: options');
    const mode: CompactionMode = o.mode ?? 'manual';
    return this.exclusive('compact', async () => {
      const before = this.live;
      await this.settleCarry();
      const { runner, parent, summarizer } = this.runnerFor(mode, o.instructions);
      const report = await this.orRollback(() =>
        runner.runCompaction(
          { turnId: `compact-${++this.turns}`, history: before, mode },
          { signal: o.signal },
        ),
      );
      const saveReport = () =>
        this.stored?.store.saveSnapshot('compaction', {
          status: report.status,
          mode: report.mode,
          strategy: report.strategy,
          itemsBefore: report.itemsBefore,
          itemsAfter: report.itemsAfter,
          summaryCalls: report.summaryCalls,
          failure: report.failure,
          receipt: report.receipt,
        });
      let boundary: BoundaryInfo | null = null;
      const { status } = report;
      if (status === 'failed') {
        saveReport();
        this.rollback();
        this.log(`${mode} compaction failed (${report.failure?.reason}): ${report.failure?.message}`);
      } else {
        // Saved only once the commit is allowed: a refused --out leaves the directory as it was.
        await this.orRollback(async () => opts.beforeCommit?.({ status, history: report.history }));
        saveReport();
        const compacted = status === 'compacted';
        if (compacted) this.guard = { ...INITIAL_LOOP_GUARD_STATE };
        boundary = this.commit(
          compacted
            ? { before, after: report.history, mode, strategy: report.strategy, receipt: report.receipt }
            : undefined,
        );
        this.carryLog.ended(this.carry, false);
      }
      return describeCompaction(report, {
        usedParentContext: parent,
        boundary,
        model: this.ctx.route.model,
        previousModel: o.previousModel,
        summarizer,
      });
    });
  }

  recall(args: unknown, request: readonly Message[] = this.live): string {
    return answerRecall(this.originals(), args, request).text;
  }

  /** Every message the session ever held: the durable log (restarts and forks), replaced histories, the live one. */
  private *originals(): Iterable<Message> {
    for (const e of this.stored?.store.events() ?? [])
      if (e.type === 'message.appended') yield e.message;
      else yield* e.history;
    for (const h of this.replaced) yield* h;
    yield* this.live;
  }

  close(): void {
    // A turn still held was never kept: the carry saved is the one from before it.
    if (this.held) this.restore(this.held.mark);
    this.stored?.rollback();
    this.carryLog.close(this.carry);
    this.stored?.store.close();
  }

  /** Commits held messages and a compaction's boundary; a compaction replaces live history and resets the cache streak. */
  private commit(compaction?: CompactionToRecord) {
    // A held turn's store writes wait for settleTurn. The write after the run keeps the carry
    // it hands on (a held write's commit, a boundary).
    const holding = this.holding;
    if (holding && compaction) holding.compaction = compaction;
    const boundary = holding
      ? null
      : (this.stored?.commit(compaction, this.carryLog.endNote(this.carry)) ?? null);
    if (compaction) {
      if (this.stored === null) this.replaced.push(compaction.before);
      this.live = compaction.after;
      if (!holding) this.cacheHealth.onCompaction('compacted');
    }
    return boundary;
  }

  /** Drops what the failed run held back: the history is the stored one again. */
  private rollback(): void {
    if (this.holding) return; // a held turn is put back by its mark
    if (this.data.storeWrites === 'onSuccess' && this.stored) this.live = this.stored.rollback();
  }

  /** Keeps what a turn hands on to the next one (its loop guard, last request and cache cycle). */
  private handOn(r: Pick<TurnResult, 'loopGuard' | 'lastSent' | 'cacheCycle'>): void {
    this.guard = r.loopGuard;
    this.lastTurn = { lastSent: r.lastSent, cacheCycle: r.cacheCycle };
  }

  private async orRollback<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      this.rollback();
      throw e;
    }
  }

  private async exclusive<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.busy)
      throw new SessionBusyError(
        `compactor session is busy; ${what} must wait for the running turn or compaction`,
      );
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }

  /**
   * The one way messages join the session: validated copies whose long texts are held as UTF-8,
   * added to the store and the live history. `append` waits for the store's fsync; a turn
   * (`syncingLater`) lets it run while it works and awaits the returned promise through
   * {@link Session.landed} before it records or returns anything.
   */
  private appendValidated(messages: Message[], syncingLater = false, carry?: unknown): Promise<void> {
    if (messages.length === 0 && carry === undefined) return Promise.resolve();
    const held = messages.map(heldMessage);
    let synced = Promise.resolve();
    if (this.holding) writeHeld(this.holding, held, this.stored);
    else if (syncingLater && this.stored) synced = this.stored.addSyncingLater(held, carry);
    else this.stored?.add(held);
    synced.catch(() => undefined); // awaited by the turn through landed()
    this.live = [...this.live, ...held];
    return synced;
  }

  /** Waits until appended messages are durable; when their fsync failed the store dropped them, and so does the session. */
  private async landed(synced: Promise<void>): Promise<void> {
    // An fsync that ended while the turn worked is seen now, not one pass of the event loop later.
    settleFinishedFsyncs();
    try {
      await synced;
    } catch (e) {
      if (this.stored) this.live = this.stored.store.loadHistory();
      throw e;
    }
  }
}
