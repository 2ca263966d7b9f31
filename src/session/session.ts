import { z } from 'zod';
import { INITIAL_LOOP_GUARD_STATE, type CompactionMode, type LoopGuardState } from '../../machines/index.js';
import { join } from 'node:path';
import { CompactorOptionsError } from '../core/errors.js';
import type { Estimator } from '../estimate/estimator.js';
import {
  anchoredPressure,
  usageAnchor,
  type AnchoredPressure,
  type UsageAnchor,
} from '../estimate/usage-anchor.js';
import { MessageSchema, type Message } from '../messages/message.js';
import {
  effectiveLimits,
  projectRequest,
  resolveBudgets,
  type Budgets,
  type Limits,
} from '../projection/index.js';
import type { ProjectionDiagnostics } from '../projection/diagnostics.js';
import {
  createLocalSummarizer,
  type LocalSummarizerWithWarnings,
} from '../runtime/create-local-summarizer.js';
import { createTurnRunner, type TurnResult, type TurnRunner } from '../runtime/turn-runner.js';
import { openSessionStore, SNAPSHOTS_DIR, type BoundaryInfo, type SessionStore } from '../store/index.js';
import {
  createCacheHealthMonitor,
  type CacheHealthMonitor,
  type CacheUsage,
  type CacheUsageVerdict,
} from './cache-health.js';
import { sessionLimits } from './limits.js';
import { parseOrThrow, SessionOptionsSchema, type CompactorSessionOptions } from './options.js';
import {
  parentContextFor,
  requestFieldsFor,
  type ParentContext,
  type RequestEnvelope,
} from './parent-context.js';
import { describeCompaction, summaryWarningFields, type SessionCompactionReport } from './report.js';
import { resolveSessionRoute, withSummarizer, type SessionRoute } from './route.js';

/** Options of {@link CompactorSession.prepareRequest}. */
export interface PrepareRequestOptions {
  /** Interactive request (C11); headless requests always clear locally. */
  interactive?: boolean;
  /** The interactive request carries Anthropic native context edits, so local clearing is skipped (C11). */
  nativeContextEdits?: boolean;
}

/** The next request's messages, with C10 diagnostics and the budgets they were computed with. */
export interface PreparedRequest {
  messages: readonly Message[];
  diagnostics: ProjectionDiagnostics;
  budgets: Budgets;
  /**
   * Pressure of this request (T3): anchored on the usage the provider reported for the last
   * request recorded with {@link CompactorSession.recordUsage} plus the local estimate of
   * what came after, or prefix + local estimate when there is no usable anchor.
   */
  pressure: AnchoredPressure;
}

/** Options of {@link CompactorSession.runTurn}. */
export interface SessionTurnOptions {
  /** New conversation messages to sync into history first (H1); validated and stored durably. */
  pending?: readonly Message[];
  /** Aborting cancels the turn; history keeps the synced messages. */
  signal?: AbortSignal;
}

/** A turn's result plus the durable boundary it recorded (R1). */
export interface SessionTurnResult extends TurnResult {
  boundary: BoundaryInfo | null;
  /** §14: summaries of this turn's compaction accepted without every template section. */
  warnings: string[];
  /** §14: the template sections they lack. */
  missingSections: string[];
}

/** Options of {@link CompactorSession.compact}. */
export interface CompactOptions {
  /** Default `manual` (always summarizes). */
  mode?: CompactionMode;
  /** Custom instructions appended to the summary prompt (and sent to native endpoints, O3). */
  instructions?: string;
  /** For `modelSwitch`: the model used before, named in the S4 message. */
  previousModel?: string;
  /** Aborting rejects the call with the signal's reason; history stays unchanged. */
  signal?: AbortSignal;
}

const CompactOptionsSchema = z.strictObject({
  mode: z.enum(['manual', 'automatic', 'recovery', 'targeted', 'modelSwitch']).optional(),
  instructions: z.string().optional(),
  previousModel: z.string().min(1).optional(),
  signal: z.instanceof(AbortSignal).optional(),
});

/** A Compactor session embedded in an agent loop. Not re-entrant: one run at a time. */
export interface CompactorSession {
  /** The live session history (replaced, never mutated, by compaction). */
  readonly history: readonly Message[];
  /** The resolved compaction route: provider, model, S1 strategy, window. */
  readonly route: Readonly<Omit<SessionRoute, 'summary' | 'standalone' | 'inline' | 'estimator' | 'secrets'>>;
  /** The token estimator every count of this session uses (the route's encoding unless given). */
  readonly estimator: Estimator;
  /** The projection limits in force (depend on the envelope when prefix tokens are estimated). */
  readonly limits: Limits;
  /** `resolveBudgets(effectiveLimits(limits, policy))`: the budgets requests are projected with. */
  readonly budgets: Budgets;
  /** S5 prompt-cache health monitor; feed it each request's usage. */
  readonly cacheHealth: CacheHealthMonitor;
  /** The durable store, when `sessionDir` was given. */
  readonly store: SessionStore | null;
  /** Loop-guard memory carried between turns (§14). */
  readonly loopGuard: LoopGuardState;
  /**
   * Records the usage the provider reported for `request` (the messages actually sent):
   * feeds the S5 cache-health monitor and anchors the next {@link PreparedRequest.pressure} (T3).
   */
  recordUsage(usage: CacheUsage, request: readonly Message[]): CacheUsageVerdict;
  /** Appends messages (validated with MessageSchema; written to the store when there is one). */
  append(...messages: Message[]): void;
  /** Sets or clears the active request envelope (S2 parent context; prefix tokens). */
  setEnvelope(envelope: RequestEnvelope | undefined): void;
  /** The next request: normalization + clearing (N, C) with C10 diagnostics and C11 gating. */
  prepareRequest(options?: PrepareRequestOptions): PreparedRequest;
  /** One headless turn in automatic mode (H1–H6); a compaction replaces history and is recorded (R1). */
  runTurn(options?: SessionTurnOptions): Promise<SessionTurnResult>;
  /** An explicit compaction pass (S3 report on success, S4 on failure). */
  compact(options?: CompactOptions): Promise<SessionCompactionReport>;
  /** Closes the store. */
  close(): void;
}

const STORE_REASON: Record<CompactionMode, string> = {
  manual: 'manual',
  automatic: 'automatic',
  recovery: 'recovery',
  targeted: 'targeted',
  modelSwitch: 'model-switch',
};

/**
 * Creates a session: resolves the route (offline by default), opens the durable store when
 * `sessionDir` is given (history is loaded from it), and wires projection, the turn runner
 * and the local summarizer together. Invalid options throw a one-line `UserError`; route
 * problems a `RouteError`.
 */
export function createCompactorSession(options: CompactorSessionOptions = {}): CompactorSession {
  const data = parseOrThrow(SessionOptionsSchema, options, 'createCompactorSession: options');
  const route = withSummarizer(
    resolveSessionRoute(data.route ?? { provider: 'offline' }, options.estimator, options.http),
    options.summarizer,
  );
  const estimator: Estimator = route.estimator;
  const settings = data.compaction ?? {};
  const cacheHealth = createCacheHealthMonitor(options.cacheHealth);
  // T3: the last provider-reported usage; a compaction replaces the request so it stops matching.
  let anchor: UsageAnchor | undefined;
  const log = options.log ?? (() => undefined);
  let envelope: RequestEnvelope | undefined = data.envelope;
  let loopGuard: LoopGuardState = { ...INITIAL_LOOP_GUARD_STATE };
  let busy = false;
  let turns = 0;

  const store = data.sessionDir ? openSessionStore(data.sessionDir, { lock: options.storeLock }) : null;
  let live: readonly Message[] = store ? store.loadHistory() : (data.history ?? []);
  if (store && data.history && data.history.length > 0) {
    if (live.length > 0)
      throw new CompactorOptionsError(
        'createCompactorSession: options.history',
        `given, but ${data.sessionDir} already holds a history (use a new or empty directory)`,
      );
    store.appendMessages(data.history);
    live = data.history;
  }

  const limits = (): Limits => sessionLimits(data.limits ?? {}, settings, route, envelope, estimator);

  function runner(
    mode: CompactionMode,
    instructions?: string,
  ): { runner: TurnRunner; parent: boolean; summarizer: LocalSummarizerWithWarnings } {
    const l = limits();
    const parent: ParentContext | null = parentContextFor(envelope, route, mode);
    const requestFields = requestFieldsFor(envelope, route);
    const summarizer = createLocalSummarizer({
      client: route.summary,
      estimator,
      budgets: resolveBudgets(effectiveLimits(l, data.policy)),
      model: route.model,
      system: parent?.system,
      tools: parent?.tools,
      maxOutputTokens: l.summaryOutputLimit,
      requestFields,
      instructions,
      promptVersion: settings.promptVersion,
      reinjectBudgetTokens: settings.reinjectBudgetTokens,
      reserveOutput: l.reservedOutput,
      prefixTokens: l.prefixTokens,
    });
    return {
      parent: parent !== null,
      summarizer,
      runner: createTurnRunner({
        estimator,
        limits: l,
        policy: data.policy,
        strategy: route.strategy.kind,
        hierarchical: data.hierarchical,
        retryBackoffMs: settings.retryBackoffMs,
        loopGuardPolicy: options.loopGuardPolicy,
        clock: options.clock,
        inspect: options.inspect,
        compaction: {
          summarizer,
          standalone: route.standalone,
          inline: route.inline,
          instructions,
          system: parent?.system,
          tools: parent?.tools,
          supportsContextEdits: route.supportsContextEdits,
          requestFields,
          secrets: route.secrets(),
        },
      }),
    };
  }

  /** R1: replace live history, write the artifact + boundary, reset the S5 streak. */
  function commit(
    before: readonly Message[],
    after: readonly Message[],
    mode: CompactionMode,
    strategy: string,
  ): BoundaryInfo | null {
    const boundary = store
      ? store.recordCompaction({
          before,
          after,
          mode: strategy === 'local' ? 'local' : 'provider',
          reason: STORE_REASON[mode],
          strategy:
            strategy === 'local'
              ? 'local'
              : strategy === 'nativeInline'
                ? 'nativeInline'
                : 'nativeStandalone',
        })
      : null;
    live = after;
    cacheHealth.onCompaction('compacted');
    return boundary;
  }

  async function exclusive<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (busy)
      throw new Error(`compactor session is busy; ${what} must wait for the running turn or compaction`);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  }

  function validated(messages: readonly Message[], where: string): Message[] {
    return messages.map((m, i) => parseOrThrow(MessageSchema, m, `${where}[${i}]`));
  }

  function appendValidated(messages: Message[]): void {
    if (messages.length === 0) return;
    store?.appendMessages(messages);
    live = [...live, ...messages];
  }

  return {
    get history() {
      return live;
    },
    get route() {
      const { summary: _s, standalone: _n, inline: _i, estimator: _e, secrets: _k, ...facts } = route;
      return facts;
    },
    estimator,
    get limits() {
      return limits();
    },
    get budgets() {
      return resolveBudgets(effectiveLimits(limits(), data.policy));
    },
    cacheHealth,
    store,
    get loopGuard() {
      return loopGuard;
    },

    append(...messages) {
      if (busy) throw new Error('compactor session is busy; append must wait for the running turn');
      appendValidated(validated(messages, 'append: message'));
    },

    setEnvelope(next) {
      envelope =
        next === undefined
          ? undefined
          : parseOrThrow(SessionOptionsSchema.shape.envelope, next, 'setEnvelope: envelope');
    },

    prepareRequest(opts = {}) {
      const projected = projectRequest(live, {
        limits: limits(),
        policy: data.policy,
        estimator,
        interactive: opts.interactive,
        nativeContextEdits: opts.nativeContextEdits,
      });
      const pressure = anchoredPressure(projected.messages, estimator, limits().prefixTokens ?? 0, anchor);
      return {
        messages: projected.messages,
        diagnostics: projected.diagnostics,
        budgets: projected.budgets,
        pressure,
      };
    },

    recordUsage(usage, request) {
      const verdict = cacheHealth.recordUsage(usage);
      anchor = usageAnchor(request, usage.inputTokens);
      return verdict;
    },

    runTurn(opts = {}) {
      return exclusive('runTurn', async () => {
        const pending = validated(opts.pending ?? [], 'runTurn: pending');
        // Pending messages are conversation facts: durable before the turn may compact them (H1).
        appendValidated(pending);
        const before = live;
        const { runner: r, summarizer } = runner('automatic');
        // With a store every step is checkpointed, so a killed turn can be resumed (R2).
        const checkpoint = store ? { checkpointPath: join(store.dir, SNAPSHOTS_DIR, 'turn.json') } : {};
        const result = await r.runTurn(
          { turnId: `turn-${++turns}`, history: before, mode: 'automatic', loopGuard },
          { signal: opts.signal, ...checkpoint },
        );
        loopGuard = result.loopGuard;
        let boundary: BoundaryInfo | null = null;
        if (result.decision === 'compacted' && result.compaction)
          boundary = commit(before, result.history, 'automatic', result.compaction.strategy);
        else if (result.compaction?.status === 'failed')
          log(
            `automatic compaction failed; continuing with full history: ${result.compaction.failure?.message}`,
          );
        const compacted = result.decision === 'compacted' && result.compaction?.strategy === 'local';
        return { ...result, boundary, ...summaryWarningFields(compacted ? summarizer.warnings() : []) };
      });
    },

    compact(opts = {}) {
      const o = parseOrThrow(CompactOptionsSchema, opts, 'compact: options');
      const mode = o.mode ?? 'manual';
      return exclusive('compact', async () => {
        const before = live;
        const { runner: r, parent, summarizer } = runner(mode, o.instructions);
        const report = await r.runCompaction(
          { turnId: `compact-${++turns}`, history: before, mode },
          { signal: o.signal },
        );
        store?.saveSnapshot('compaction', {
          status: report.status,
          mode: report.mode,
          strategy: report.strategy,
          itemsBefore: report.itemsBefore,
          itemsAfter: report.itemsAfter,
          summaryCalls: report.summaryCalls,
          failure: report.failure,
        });
        let boundary: BoundaryInfo | null = null;
        if (report.status === 'compacted') {
          boundary = commit(before, report.history, mode, report.strategy);
          loopGuard = { ...INITIAL_LOOP_GUARD_STATE };
        } else if (report.status === 'failed')
          log(`${mode} compaction failed (${report.failure?.reason}): ${report.failure?.message}`);
        return describeCompaction(report, {
          usedParentContext: parent,
          boundary,
          model: route.model,
          previousModel: o.previousModel,
          summaryWarnings: report.strategy === 'local' ? summarizer.warnings() : [],
        });
      });
    },

    close() {
      store?.close();
    },
  };
}
