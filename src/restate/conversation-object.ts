import { z } from 'zod';
import { branchName, hashOf, messageHash } from '../adapters/shared/sync-point.js';
import { MessageSchema, type Message } from '../messages/message.js';
import { SessionOptionsSchema } from '../session/options.js';
import type { SessionTurnResult } from '../session/session-types.js';
import { StrategySchema } from '../store/events.js';
import { SummaryCacheReportSchema } from '../runtime/local-summary/summary-prefix.js';
import { answerRecall, parseRecallArgs, type RecallAnswer } from '../projection/recall.js';
import { checkedInput, type ObjectContext, type ObjectSharedContext, type RestateSdk } from './sdk.js';
import type { ServiceDefinition } from './sdk.js';

/**
 * A conversation as a client resends it (the whole list on every request, as a proxy sees it),
 * kept in the session objects of its branches. The virtual object `compactorConversation`,
 * keyed by the conversation id, knows how far the list was followed; its `turn` hands the new
 * messages to the current branch's session object and answers the request to send. Restate
 * runs one `turn` per conversation at a time, so requests of one conversation that arrive at
 * once through different proxies wait for each other instead of being refused, and each sees
 * what the one before it synced. The call to the session object is a recorded step: a `turn`
 * retried after its worker died reads the finished turn back.
 */

/** Name of the conversation object of session object `name`. */
export const conversationName = (name: string) => `${name}Conversation`;

const SYNC_KEY = 'sync';

/** How far the conversation was followed, and which branch is current. */
const SyncSchema = z.strictObject({
  /** How many of the client's messages the branch's session holds (or has compacted). */
  synced: z.number().int().nonnegative(),
  /** Hash of the last of them: another one there means the client rewrote its list. */
  lastHash: z.string(),
  /** 0 the first branch; each rewrite starts the next one. */
  branch: z.number().int().nonnegative(),
  /** Short hashes of the synced messages, in order (absent in states kept before them). */
  hashes: z.array(z.string()).optional(),
});
type Sync = z.infer<typeof SyncSchema>;

const HELD_KEY = 'held';

/**
 * The last turn held for a proxy's request: the sync point it moved to, and the one before it
 * (null: none), to go back to when its request failed.
 */
const HeldSchema = z.strictObject({
  turn: z.string().min(1),
  point: SyncSchema,
  /** Absent in a turn held before turns were written at once: the sync point moves once it is kept. */
  before: SyncSchema.nullable().optional(),
  /** Its request failed: only the same request again (or one that carries it on) keeps it. */
  dropped: z.boolean().optional(),
});
type Held = z.infer<typeof HeldSchema>;

const SettleInput = z.strictObject({ turn: z.string().min(1), keep: z.boolean() });

/** The input of `turn`: the whole conversation, and the request's envelope, limits and clearing settings. */
export const ConversationTurnInput = z.strictObject({
  messages: z.array(MessageSchema),
  envelope: SessionOptionsSchema.shape.envelope,
  limits: SessionOptionsSchema.shape.limits,
  policy: SessionOptionsSchema.shape.policy,
  /** Hold the turn under this name until `settle` says whether its request was answered (a proxy's). */
  hold: z.string().min(1).optional(),
});
export type ConversationTurnCall = z.infer<typeof ConversationTurnInput>;

/** How a turn can end, as the session reports it. */
const TURN_DECISIONS = [
  'below-threshold',
  'cleared',
  'compacted',
  'unchanged',
  'failed',
  'guarded',
  'cancelled',
  'window-too-small',
] as const satisfies readonly SessionTurnResult['decision'][];

/** What `turn` answers: the session's turn result under its own names, and the branch. */
export const ConversationTurnResultSchema = z.strictObject({
  /** The request to send: the projected conversation. */
  request: z.array(MessageSchema),
  decision: z.enum(TURN_DECISIONS),
  summaryCalls: z.number().int().nonnegative(),
  strategy: StrategySchema.nullable(),
  /** The branch the turn ran on (0 unless the client rewrote its list). */
  branch: z.number().int().nonnegative(),
  /** How the turn's summary request was built and its cached share (absent from an older worker). */
  summaryCache: SummaryCacheReportSchema.nullable().optional(),
  /** The name to settle a held turn by (`settle`); absent when the turn was kept at once. */
  held: z.string().min(1).optional(),
  /** The held turn is written already: only a failed request needs to settle it. */
  written: z.boolean().optional(),
  /**
   * The caller's `x-compactor-attempt` header of the call that worked the turn out: another
   * one means the answer was read back for a call sent again (absent from an older worker).
   */
  attempt: z.string().optional(),
});
/** The header naming a `turn` call's attempt (echoed as `attempt`). */
export const ATTEMPT_HEADER = 'x-compactor-attempt';
export type ConversationTurnResult = z.infer<typeof ConversationTurnResultSchema>;

/** The part of the session object's `runTurn` answer the conversation uses. */
type SessionTurn = Pick<ConversationTurnResult, 'decision' | 'strategy' | 'summaryCalls' | 'summaryCache'> & {
  request: Message[] | null;
  /** A held turn was written at once (absent from an older worker, which keeps it aside). */
  heldWritten?: boolean;
};
type SessionClient = {
  runTurn(input: unknown): Promise<SessionTurn>;
  settleTurn(input: { turn: string; keep: boolean }): Promise<{ kept: boolean }>;
  state(): Promise<{ history: Message[] }>;
  recall(args: unknown): Promise<RecallAnswer>;
};

/** A shorter list, or another message where the last synced one was, is a rewritten conversation. */
const rewritten = (point: Sync, messages: readonly Message[]) =>
  messages.length < point.synced ||
  (point.synced > 0 && hashOf(messages[point.synced - 1]) !== point.lastHash);

/**
 * Where a rewritten list's branch starts: from the longest prefix it shares with what was
 * synced. When the messages after that prefix are still verbatim at the end of the old
 * branch's history, the new branch starts from that history without them, so an earlier
 * compaction (its summary) carries over; otherwise from nothing, with the whole list.
 */
async function forkPoint(
  point: Sync,
  messages: readonly Message[],
  old: SessionClient,
): Promise<{ point: Sync; start?: Message[] }> {
  const branch = point.branch + 1;
  const fresh = { point: { synced: 0, lastHash: '', branch, hashes: [] } };
  const hashes = point.hashes;
  if (hashes === undefined || hashes.length !== point.synced) return fresh;
  let shared = 0;
  while (
    shared < hashes.length &&
    shared < messages.length &&
    hashes[shared] === messageHash(messages[shared])
  )
    shared++;
  if (shared === 0) return fresh;
  const dropped = point.synced - shared;
  const { history } = await old.state();
  const tail = history.slice(history.length - dropped).map(messageHash);
  if (history.length <= dropped || tail.some((h, i) => h !== hashes[shared + i])) return fresh;
  const synced = {
    synced: shared,
    lastHash: hashOf(messages[shared - 1]),
    branch,
    hashes: hashes.slice(0, shared),
  };
  return { point: synced, start: history.slice(0, history.length - dropped) };
}

/**
 * A recall call answered by the current branch, else by the earlier ones, newest first: a
 * client that rewrote its list (trimmed it, or compacted it itself) may still hold ids the
 * model saw before, and the branch they were seen on keeps their originals.
 */
async function recallAcrossBranches(
  current: number | undefined,
  args: unknown,
  ask: (branch: number, args: unknown) => Promise<RecallAnswer>,
): Promise<RecallAnswer> {
  const parsed = parseRecallArgs(args);
  if (typeof parsed === 'string') return { text: parsed, found: false };
  // A conversation never seen holds nothing.
  if (current === undefined) return answerRecall([], parsed);
  let first: RecallAnswer | undefined;
  for (let branch = current; branch >= 0; branch--) {
    const answer = await ask(branch, parsed);
    if (answer.found) return answer;
    first ??= answer;
  }
  return first!;
}

/** The held turn, if any (one this version cannot read counts as none). */
async function heldTurn(ctx: ObjectSharedContext): Promise<Held | undefined> {
  const parsed = HeldSchema.safeParse(await ctx.get<unknown>(HELD_KEY));
  return parsed.success ? parsed.data : undefined;
}

/** Keeps or drops a held turn on its branch; the sync point after it when it was kept. */
async function settleHeld(ctx: ObjectContext, held: Held, keep: boolean, session: SessionClient) {
  ctx.clear(HELD_KEY);
  const { kept } = await session.settleTurn({ turn: held.turn, keep });
  if (!kept) return undefined;
  ctx.set<Sync>(SYNC_KEY, held.point);
  return held.point;
}

/**
 * Where the next turn starts when a turn is held: a written one (answered, or its proxy gone
 * before it could say) is final; a failed one is written again when this request carries it
 * on (the same messages and more), else forgotten. Undefined: start from the saved point.
 */
async function afterHeld(
  ctx: ObjectContext,
  held: Held,
  messages: readonly Message[],
  session: SessionClient,
) {
  if (held.before !== undefined && held.dropped !== true) {
    ctx.clear(HELD_KEY);
    return held.point;
  }
  const keep = held.dropped !== true || !rewritten(held.point, messages);
  return settleHeld(ctx, held, keep, session);
}

/** Keeps (a failed turn, sent again) or drops (its request failed) a held turn; whether it is kept. */
async function settleVerdict(ctx: ObjectContext, held: Held, keep: boolean, session: SessionClient) {
  // A turn held before turns were written at once: kept only now, dropped for the next turn to forget.
  if (held.before === undefined) {
    if (!keep) ctx.set<Held>(HELD_KEY, { ...held, dropped: true });
    return keep && (await settleHeld(ctx, held, true, session)) !== undefined;
  }
  if (keep === (held.dropped !== true)) {
    if (keep) ctx.clear(HELD_KEY);
    return keep;
  }
  if (keep) return (await settleHeld(ctx, held, true, session)) !== undefined;
  const { kept } = await session.settleTurn({ turn: held.turn, keep: false });
  // Something was written after it (not through this conversation): it stays.
  if (kept) {
    ctx.clear(HELD_KEY);
    return true;
  }
  if (held.before === null) ctx.clear(SYNC_KEY);
  else ctx.set<Sync>(SYNC_KEY, held.before);
  ctx.set<Held>(HELD_KEY, { ...held, dropped: true });
  return false;
}

/** The sync point once `messages` went to branch `at.branch` after its first `at.synced`. */
function syncAfter(at: Sync, messages: readonly Message[]): Sync {
  const last = messages.at(-1);
  const known = at.hashes?.length === at.synced ? at.hashes : undefined;
  return {
    synced: messages.length,
    lastHash: last === undefined ? '' : hashOf(last),
    branch: at.branch,
    ...(known ? { hashes: [...known, ...messages.slice(at.synced).map(messageHash)] } : {}),
  };
}

/** Reads the sync point of a conversation object named `own` (null before its first turn). */
function savedPoint(sdk: RestateSdk, own: string) {
  return async (ctx: ObjectSharedContext): Promise<Sync | null> => {
    const raw = await ctx.get<unknown>(SYNC_KEY);
    if (raw === null) return null;
    const parsed = SyncSchema.safeParse(raw);
    if (!parsed.success)
      throw new sdk.TerminalError(`${own}/${ctx.key}: its state holds no valid sync point`, {
        errorCode: 500,
      });
    return parsed.data;
  };
}

/** The conversation object of session object `name` (default `compactorSessionConversation`). */
export function conversationObject(sdk: RestateSdk, name: string): ServiceDefinition {
  const own = conversationName(name);
  const input = checkedInput(sdk, own);
  const { exclusive } = sdk.handlers.object;
  const saved = savedPoint(sdk, own);
  const client = (ctx: ObjectSharedContext) => (branch: number) =>
    ctx.objectClient<SessionClient>({ name }, branchName(ctx.key, branch));
  return sdk.object({
    name: own,
    handlers: {
      turn: exclusive(async (ctx: ObjectContext, raw: unknown): Promise<ConversationTurnResult> => {
        const { messages, hold, ...call } = input(ConversationTurnInput, raw, 'turn');
        const branch = client(ctx);
        const held = await heldTurn(ctx);
        const previous =
          (held && (await afterHeld(ctx, held, messages, branch(held.point.branch)))) ?? (await saved(ctx));
        const point = previous ?? { synced: 0, lastHash: '', branch: 0, hashes: [] };
        // A rewritten list starts a new branch; the old one stays.
        const fork = rewritten(point, messages)
          ? await forkPoint(point, messages, branch(point.branch))
          : null;
        const at = fork?.point ?? point;
        // A failed turn changes nothing: the same request again sends the same messages.
        const turn = await branch(at.branch).runTurn({
          pending: messages.slice(at.synced),
          ...(fork?.start ? { start: fork.start } : {}),
          ...(hold !== undefined ? { hold } : {}),
          ...call,
        });
        if (turn.request === null)
          throw new sdk.TerminalError(`${own}/${ctx.key}: the turn built no request (${turn.decision})`, {
            errorCode: 500,
          });
        // A held turn (a new branch with it) moves the sync point at once, and keeps the one
        // before to go back to when its request fails.
        const next = syncAfter(at, messages);
        const written = hold === undefined || turn.heldWritten === true;
        if (written) ctx.set<Sync>(SYNC_KEY, next);
        if (hold !== undefined)
          ctx.set<Held>(HELD_KEY, { turn: hold, point: next, ...(written ? { before: previous } : {}) });
        const { request, decision, summaryCalls, strategy, summaryCache = null } = turn;
        const answer = { request, decision, summaryCalls, strategy, branch: at.branch, summaryCache };
        const attempt = ctx.request().headers.get(ATTEMPT_HEADER);
        return {
          ...answer,
          ...(hold !== undefined ? { held: hold } : {}),
          // Only a caller that names its attempt reads these (an older proxy refuses unknown fields).
          ...(attempt !== undefined ? { attempt, ...(hold !== undefined ? { written } : {}) } : {}),
        };
      }),
      // Drops a held turn whose request failed (`{ turn, keep: false }`: the conversation and
      // its branch go back to what they were, the turn kept aside for the same request again),
      // or keeps it again (`keep: true`); answers whether it is kept.
      settle: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const { turn, keep } = input(SettleInput, raw, 'settle');
        const held = await heldTurn(ctx);
        if (held?.turn !== turn) return { kept: false };
        return { kept: await settleVerdict(ctx, held, keep, client(ctx)(held.point.branch)) };
      }),
      // The readers are exclusive: they run after a settle call sent before them, so they do
      // not show a turn whose request failed.
      state: exclusive(async (ctx: ObjectContext) => saved(ctx)),
      recall: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const point = await saved(ctx);
        const branch = client(ctx);
        return recallAcrossBranches(point?.branch, raw, (b, args) => branch(b).recall(args));
      }),
    },
  });
}
