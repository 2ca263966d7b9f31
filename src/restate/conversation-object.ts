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

/** A turn held until its request is answered: the sync point it moves to once kept. */
const HeldSchema = z.strictObject({
  turn: z.string().min(1),
  point: SyncSchema,
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
});
export type ConversationTurnResult = z.infer<typeof ConversationTurnResultSchema>;

/** The part of the session object's `runTurn` answer the conversation uses. */
type SessionTurn = Pick<ConversationTurnResult, 'decision' | 'strategy' | 'summaryCalls' | 'summaryCache'> & {
  request: Message[] | null;
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
        // A turn still held when the next one comes is dropped when its request failed and
        // this one does not carry it on; else (answered, or its proxy gone before it could
        // say) it is kept, as a turn not held would have been.
        const held = await heldTurn(ctx);
        const keep = held !== undefined && (held.dropped !== true || !rewritten(held.point, messages));
        const point = (held && (await settleHeld(ctx, held, keep, branch(held.point.branch)))) ??
          (await saved(ctx)) ?? { synced: 0, lastHash: '', branch: 0, hashes: [] };
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
        // A held turn (a new branch with it) moves the sync point only once it is kept.
        if (hold !== undefined) ctx.set<Held>(HELD_KEY, { turn: hold, point: syncAfter(at, messages) });
        else ctx.set<Sync>(SYNC_KEY, syncAfter(at, messages));
        const { request, decision, summaryCalls, strategy, summaryCache = null } = turn;
        const answer = { request, decision, summaryCalls, strategy, branch: at.branch, summaryCache };
        return { ...answer, ...(hold !== undefined ? { held: hold } : {}) };
      }),
      // Keeps a held turn (`{ turn, keep: true }`) once its request was answered, or marks it
      // failed (kept aside for the same request again); answers whether it was kept.
      settle: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const { turn, keep } = input(SettleInput, raw, 'settle');
        const held = await heldTurn(ctx);
        if (held?.turn !== turn) return { kept: false };
        if (!keep) ctx.set<Held>(HELD_KEY, { ...held, dropped: true });
        const point = keep ? await settleHeld(ctx, held, true, client(ctx)(held.point.branch)) : undefined;
        return { kept: point !== undefined };
      }),
      // The readers are exclusive: they run after a settle call sent before them, so they see
      // the turn the client was answered on.
      state: exclusive(async (ctx: ObjectContext) => saved(ctx)),
      recall: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const point = await saved(ctx);
        const branch = client(ctx);
        return recallAcrossBranches(point?.branch, raw, (b, args) => branch(b).recall(args));
      }),
    },
  });
}
