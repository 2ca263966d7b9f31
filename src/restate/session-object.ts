import { z } from 'zod';
import { MessageSchema, type Message } from '../messages/message.js';
import type { Clock } from '../runtime/turn-runner-types.js';
import { Session } from '../session/session.js';
import { SessionOptionsSchema, type CompactorSessionOptions } from '../session/options.js';
import type { SessionTurnResult } from '../session/session-types.js';
import { memoryStore, type BoundaryInfo, type MemoryStore } from '../store/index.js';
import { keepTurnInFlight, TURN_KEY, turnInFlight, type InFlightTurnView } from './in-flight-turn.js';
import { journaledClients } from './journaled-clients.js';
import { storeHandlers } from './store-handlers.js';
import {
  allBoundaries,
  keepRecords,
  keptSummaryCache,
  knownBoundary,
  loadRecords,
  messagesRecorded,
  movesToArchive,
  storeRecords,
  type StoredRecords,
} from './working-records.js';
import { archivedHistory, archiveHistories, sessionArchive } from './session-archive.js';
import { conversationObject } from './conversation-object.js';
import { recallFromStore } from './recall-handler.js';
import { anchoredOnUsage, keepUsage, keptUsage, ProviderUsageSchema } from './provider-usage.js';
import { keepLastSent, keptLastSent, lastSentOf } from './last-sent.js';
import { finalHeldTurn, holdTurn, settleHeldTurn, writeHeldTurn } from './held-turn.js';
import { keptCarry } from '../session/turn-carry.js';
import type { TurnCarry } from '../session/session-runner.js';
import type { SummaryCacheReport } from '../runtime/local-summary/summary-prefix.js';
import {
  restateSdk,
  type ObjectContext,
  type ObjectSharedContext,
  type RestateEndpoint,
  checkedInput,
  forGoodIfUserError,
  terminalOnUserError,
  type RestateSdk,
  type ServiceDefinition,
} from './sdk.js';

/**
 * The Restate virtual object `compactorSession`: one object per session id. Restate runs at
 * most one exclusive handler (`append`, `runTurn`, `compact`) per id at a time, on whichever
 * worker it picks, so a session is never written by two workers at once; the shared ones
 * (`prepareRequest`, `state`, `recall`, `restore`) only read. The session's records live in the
 * object's state, so any worker continues it; every provider call of a turn is a recorded
 * step, so a turn retried after its worker died never pays for a summary twice.
 */

/** The default object name, the first path segment of its ingress URLs. */
export const OBJECT_NAME = 'compactorSession';

/** Session options of every session the object runs; history and store live in the object. */
export type ObjectSessionOptions = Omit<
  CompactorSessionOptions,
  'history' | 'store' | 'sessionDir' | 'storeLock' | 'startOver' | 'storeWrites'
>;

/** Options of {@link compactorSession} and {@link endpoint}. */
export interface CompactorSessionObjectOptions {
  /** Object name (default `compactorSession`). */
  name?: string;
  /** Route, limits, policy … of the sessions (default: the offline route). */
  session?: ObjectSessionOptions;
}

const AppendInput = z.strictObject({ messages: z.array(MessageSchema) });
/**
 * A turn's input: the new messages, and, for a caller that serves several models and tools
 * (the proxy), the request's system prompt and tools, limits and clearing settings over the
 * object's own.
 */
const TurnInput = z
  .strictObject({
    pending: z.array(MessageSchema).optional(),
    /** Where a new branch of a conversation starts (an edited list keeping an earlier compaction); only into an empty session. */
    start: z.array(MessageSchema).optional(),
    /** Name the turn: `settleTurn` with `keep: false` puts the records back as they were before it (its request failed). */
    hold: z.string().min(1).optional(),
    envelope: SessionOptionsSchema.shape.envelope,
    limits: SessionOptionsSchema.shape.limits,
    policy: SessionOptionsSchema.shape.policy,
  })
  .nullish();
type TurnCall = Omit<NonNullable<z.infer<typeof TurnInput>>, 'pending' | 'start' | 'hold'>;
const SettleInput = z.strictObject({ turn: z.string().min(1), keep: z.boolean() });
const CompactInput = z
  .strictObject({
    mode: z.enum(['manual', 'automatic', 'recovery', 'targeted', 'modelSwitch']).optional(),
    instructions: z.string().optional(),
    previousModel: z.string().min(1).optional(),
  })
  .nullish();
const PrepareInput = z
  .strictObject({ interactive: z.boolean().optional(), nativeContextEdits: z.boolean().optional() })
  .nullish();
const RestoreInput = z.strictObject({ boundary: z.string().min(1) });

/** What `runTurn` answers: the turn's outcome and the next request to send. */
export interface ObjectTurnResult {
  decision: string;
  strategy: string | null;
  summaryCalls: number;
  items: { before: number; after: number };
  boundary: BoundaryInfo | null;
  /** Messages in the session's live history after the turn. */
  historyLength: number;
  /** The next request window (null only when the turn did not build one). */
  request: readonly Message[] | null;
  /** How the turn's summary request was built and the share of it the provider's cache served; null without one. */
  summaryCache: SummaryCacheReport | null;
  /** A held turn (`hold`) was written at once (`settleTurn` with `keep: false` puts it back); absent when kept aside. */
  heldWritten?: true;
}

/** What `state` answers. */
export interface ObjectSessionState {
  history: Message[];
  boundaries: BoundaryInfo[];
  /** Messages ever appended (compactions do not lower it). */
  messagesRecorded: number;
  /** The turn in flight (its machine state and how many steps it has settled), null between turns. */
  turn: InFlightTurnView | null;
  /**
   * What the provider reported for the last request it was told of (`recordUsage`): input
   * tokens, of them cached, and how many messages of the request they cover; null before.
   */
  usage: { inputTokens: number; cachedInputTokens?: number; messageCount: number; lastHash: string } | null;
  /** How the last summary request was built and the share of it the provider's cache served; null before one. */
  summaryCache: SummaryCacheReport | null;
}

/** Reading a handler's input, opening the session from state and saving what a run committed. */
function sessionAccess(sdk: RestateSdk, name: string, sessionOptions: ObjectSessionOptions) {
  const input = checkedInput(sdk, name);

  /**
   * The session as its records left it, with provider calls recorded as steps of `ctx`, and a
   * turn's own envelope, limits and clearing settings over the object's.
   */
  const open = async (ctx: ObjectSharedContext, clock?: Clock, call: TurnCall = {}) => {
    const records = await loadRecords(ctx);
    const store = memoryStore({ ...storeRecords(records), artifacts: {} }, `${name}/${ctx.key}: state`);
    const { envelope, limits, policy } = call;
    const session = terminalOnUserError(sdk, () => {
      const opened = new Session(
        {
          ...sessionOptions,
          store,
          ...(clock ? { clock } : {}),
          ...(limits ? { limits: { ...sessionOptions.limits, ...limits } } : {}),
          ...(policy ? { policy: { ...sessionOptions.policy, ...policy } } : {}),
        },
        (route) => journaledClients(ctx, route),
      );
      if (envelope) opened.setEnvelope(envelope);
      return opened;
    });
    // The next turn decides as it would in a session kept open since the last one.
    const carry = keptCarry(records.carry);
    if (carry) session.carryOn(carry);
    return { session, store, records };
  };

  /**
   * Writes what the run committed: new pre-compaction histories first (to the archive), then
   * the records (older events to a chunk when the run compacted) with the run's notes (the
   * loaded ones where it has none).
   */
  const save = async (
    ctx: ObjectContext,
    store: MemoryStore,
    loaded: StoredRecords,
    notes: { summaryCache?: SummaryCacheReport | null; carry?: TurnCarry } = {},
  ) => {
    const { artifacts, ...records } = store.records();
    await archiveHistories(ctx, name, artifacts);
    const { summaryCache, carry } = notes;
    await keepRecords(ctx, name, loaded, records, {
      ...(summaryCache ? { summaryCache } : {}),
      ...(carry ? { carry } : {}),
    });
  };
  return { input, open, save };
}

/**
 * The virtual object, to bind to an endpoint with its archive:
 * `restate.endpoint().bind(compactorSession()).bind(compactorSessionArchive()).bind(compactorConversation())`.
 */
export function compactorSession(options: CompactorSessionObjectOptions = {}): ServiceDefinition {
  const [sdk, name] = [restateSdk(), options.name ?? OBJECT_NAME];
  const access = sessionAccess(sdk, name, options.session ?? {});
  const { input, open, save } = access;
  const { exclusive, shared } = sdk.handlers.object;
  return sdk.object({
    name,
    handlers: {
      ...storeHandlers(sdk, name, input),
      append: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const { messages } = input(AppendInput, raw, 'append');
        const { session, store, records } = await open(ctx);
        session.append(...messages);
        await save(ctx, store, records);
        return { historyLength: session.history.length };
      }),
      runTurn: exclusive(runTurnHandler(sdk, access)),
      // Drops (`{ turn, keep: false }`) or keeps again the turn a `runTurn` held; answers whether it is kept.
      settleTurn: exclusive(async (ctx: ObjectContext, raw: unknown) => ({
        kept: await settleHeldTurn(ctx, name, input(SettleInput, raw, 'settleTurn')),
      })),
      compact: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const opts = input(CompactInput, raw, 'compact') ?? {};
        const { session, store, records } = await open(ctx);
        const report = await session.compact(opts).catch((e: unknown) => {
          throw forGoodIfUserError(sdk, e);
        });
        await save(ctx, store, records, { summaryCache: report.summaryCache, carry: session.carry });
        return plain(report);
      }),
      // What the provider counted for a request the object built; its next requests are anchored on it.
      recordUsage: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        keepUsage(ctx, input(ProviderUsageSchema, raw, 'recordUsage'));
      }),
      prepareRequest: shared(prepareRequestHandler(access)),
      state: shared(async (ctx: ObjectSharedContext): Promise<ObjectSessionState> => {
        const { session, store, records } = await open(ctx);
        const boundaries = await allBoundaries(ctx, name, records, store.listBoundaries());
        const turn = await turnInFlight(ctx);
        return {
          history: [...session.history],
          boundaries,
          messagesRecorded: messagesRecorded(records),
          turn,
          usage: await keptUsage(ctx),
          summaryCache: keptSummaryCache(records),
        };
      }),
      // A call of the recall tool (`{ id, range? }`), answered from everything the session stored.
      recall: shared(async (ctx: ObjectSharedContext, raw: unknown) => recallFromStore(ctx, name, raw)),
      restore: shared(async (ctx: ObjectSharedContext, raw: unknown) => {
        const { boundary } = input(RestoreInput, raw, 'restore');
        const known = knownBoundary(await loadRecords(ctx), boundary);
        const history = known ? await archivedHistory(ctx, name, boundary) : null;
        if (history === null)
          throw new sdk.TerminalError(`${name}/${ctx.key}: no compaction boundary '${boundary}'`, {
            errorCode: 404,
          });
        return history;
      }),
    },
  });
}

/** `prepareRequest`: the next request, its pressure anchored on the provider's last count when it applies. */
function prepareRequestHandler({ input, open }: ReturnType<typeof sessionAccess>) {
  return async (ctx: ObjectSharedContext, raw: unknown) => {
    const opts = input(PrepareInput, raw, 'prepareRequest') ?? {};
    const { session } = await open(ctx);
    const prepared = session.prepareRequest(opts);
    const pressure = anchoredOnUsage(session, prepared.messages, await keptUsage(ctx), prepared.pressure);
    const { messages, diagnostics, budgets } = prepared;
    return plain({ messages, diagnostics, budgets, pressure });
  };
}

/** `runTurn`: continues a kept turn of the same request, or starts one; commits what it settled. */
function runTurnHandler(sdk: RestateSdk, { input, open, save }: ReturnType<typeof sessionAccess>) {
  return async (ctx: ObjectContext, raw: unknown): Promise<ObjectTurnResult> => {
    const { pending = [], start, hold, ...call } = input(TurnInput, raw, 'runTurn') ?? {};
    // The turn's clock is recorded (below), so a replayed run writes the very snapshots it
    // wrote before; the session reads it only once the turn runs.
    let startedAt = 0;
    // This turn builds on the last held one: it can no longer be put back.
    finalHeldTurn(ctx);
    const { session, store, records } = await open(ctx, { now: () => startedAt }, call);
    // A new branch starts where its conversation left off; committed with the turn or not at all.
    if (start !== undefined && start.length > 0 && session.history.length === 0) session.append(...start);
    // The request the last turn built was sent: a summary by the same model asks over it.
    const sent = await keptLastSent(ctx, session.history, call.envelope, await keptUsage(ctx));
    if (sent) session.rememberSent(sent.messages, sent.providerTokens);
    const inFlight = await keepTurnInFlight(ctx, pending, [...session.history, ...pending]);
    startedAt = await ctx.run('turn started', async () => Date.now());
    const result = await session.runTurn({ pending, ...inFlight }).catch((e: unknown) => {
      const error = forGoodIfUserError(sdk, e);
      // Refused for good: nothing is left to continue.
      if (error instanceof sdk.TerminalError) ctx.clear(TURN_KEY);
      throw error;
    });
    const [summaryCache, carry] = [result.summaryCache, session.carry];
    // The request to remember as the last one sent: none new after a failed turn (undefined),
    // null when it went nowhere known (forget the last one).
    const built =
      result.request !== null && result.decision !== 'failed'
        ? (lastSentOf(result.request, session.history, call.envelope) ?? null)
        : undefined;
    const notes = { ...(summaryCache ? { summaryCache } : {}), carry };
    const parts = { after: store.records(), notes, lastSent: built };
    // A held turn that writes nothing to the archive is written at once (a failed request's
    // `settleTurn` puts it back); one that does is kept aside until `settleTurn` keeps it, so
    // the answer does not wait for its archive writes.
    const writeNow =
      hold !== undefined &&
      Object.keys(parts.after.artifacts).length === 0 &&
      !movesToArchive(parts.after.events);
    if (hold !== undefined && writeNow)
      await writeHeldTurn(ctx, hold, records, built, () => save(ctx, store, records, notes));
    else if (hold !== undefined) holdTurn(ctx, hold, records, parts);
    else {
      await save(ctx, store, records, notes);
      if (built !== undefined) keepLastSent(ctx, built);
    }
    ctx.clear(TURN_KEY);
    const answer = turnAnswer(result, session.history.length);
    return writeNow ? { ...answer, heldWritten: true } : answer;
  };
}

/**
 * The object keeping each session's pre-compaction histories, named after the session object
 * (`compactorSessionArchive`); bind it next to {@link compactorSession}, which calls it.
 */
export function compactorSessionArchive(
  options: Pick<CompactorSessionObjectOptions, 'name'> = {},
): ServiceDefinition {
  return sessionArchive(restateSdk(), options.name ?? OBJECT_NAME);
}

/**
 * The object following each conversation a proxy serves (`compactorSessionConversation`): it
 * hands each request's new messages to the session object; bind it next to {@link compactorSession}.
 */
export function compactorConversation(
  options: Pick<CompactorSessionObjectOptions, 'name'> = {},
): ServiceDefinition {
  return conversationObject(restateSdk(), options.name ?? OBJECT_NAME);
}

/**
 * An endpoint serving the object, its archive and its conversations: `endpoint().listen(9080)`,
 * or `.bind(...)` more services first.
 */
export function endpoint(options: CompactorSessionObjectOptions = {}): RestateEndpoint {
  return restateSdk()
    .endpoint()
    .bind(compactorSession(options))
    .bind(compactorSessionArchive(options))
    .bind(compactorConversation(options));
}

/** What `runTurn` answers of a turn's result. */
function turnAnswer(result: SessionTurnResult, historyLength: number): ObjectTurnResult {
  const { decision, strategy, summaryCalls, items, boundary, request, summaryCache } = result;
  return { decision, strategy, summaryCalls, items, boundary, historyLength, request, summaryCache };
}

/** Plain JSON data (what the ingress answers). */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
