import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Message } from '../../messages/message.js';
import { CancelledError } from '../../core/errors.js';
import { parseOptions } from '../../core/parse-options.js';
import { answerRecall, RECALL_NOT_FOUND, SPAN_NOT_FOUND } from '../../projection/recall.js';
import { applyCallSettings, callSettings, settingsKey } from './call-settings.js';
import { fileStore } from '../../store/index.js';
import {
  createCompactorSession,
  type CompactorSession,
  type CompactorSessionOptions,
  type RequestEnvelope,
  type RequestWire,
  SessionOptionsSchema,
  type SessionTurnResult,
} from '../../session/index.js';
import {
  advanceSyncPoint,
  branchName,
  catchUpSyncPoint,
  conversationDir,
  dirName,
  hashOf,
  messageHash,
  readSyncPoint,
  sharedLinks,
  saveSyncPoint,
  syncFile,
  type SyncPoint,
} from './sync-point.js';
import { heldCall, settling, type HeldState, type KeptPoint } from './held-call.js';
import { heldFork } from './held-fork.js';
import { evictBeyond, released, untilClosed } from './evict.js';

/** One model call of a framework agent loop, in canonical messages. */
export interface ConversationCall {
  /** The conversation's id from the caller or framework; default: derived from the system prompt and first message (see {@link conversationIdOf}). */
  conversationId?: string;
  /** The request's system prompt: never compacted, counted as prefix. */
  system?: string;
  /** Tool schemas of the request: never compacted, counted as prefix. */
  tools?: RequestEnvelope['tools'];
  /** The whole conversation as the framework sends it (without the system prompt). */
  messages: readonly Message[];
  /**
   * One value per message of `messages`, each covering that message and all before it (a hash
   * chain, e.g. over the bytes a client sent them in): two calls whose values agree at a position
   * share every message up to it. With it a call tells a longer list from an edited one
   * (anywhere in it) with one comparison instead of hashing messages; ignored when its length differs.
   */
  chain?: readonly string[];
  /** The model's id (and provider name), to look its window up in the catalog when `limits.capacity` is absent. */
  model?: { provider?: string; id: string };
  /** The wire protocol the request goes out in, when the caller knows it (a proxy does). */
  wire?: RequestWire;
  /**
   * Limits of this conversation's session, over the shared ones (a proxy reserves the output
   * its client asks for). A call with other limits than the last applies them from its request on.
   */
  limits?: CompactorSessionOptions['limits'];
  /** Clearing policy of this conversation's session, over the shared one; a changed one applies from this call on. */
  policy?: CompactorSessionOptions['policy'];
  /** Native compaction client of this conversation's session (used when it is opened; see `standalone`). */
  standalone?: CompactorSessionOptions['standalone'];
  /** Inline native compaction client of this conversation's session (used when it is opened). */
  inline?: CompactorSessionOptions['inline'];
  /** Aborting cancels the call (and the summary call it is making); the call rejects. */
  signal?: AbortSignal;
  /** What the conversation holds in memory after this call, in bytes as the caller counts them (see `maxBytes`). */
  bytes?: number;
  /**
   * Keep nothing of the call until its projection's `settle` says so: the conversation runs no
   * other call meanwhile, and `settle(false)` leaves it exactly as it was before the call (a
   * proxy keeps a turn only once the provider accepted its request).
   */
  held?: boolean;
}

/**
 * What the model is sent instead, and the conversation it belongs to. The turn's facts keep the
 * names the turn reports them by (`request`, `decision`, `strategy`, `summaryCalls`, `compaction`).
 */
export interface ConversationProjection extends Pick<
  SessionTurnResult,
  'decision' | 'strategy' | 'summaryCalls' | 'compaction' | 'summaryCache'
> {
  conversationId: string;
  /** The request to send: the projected conversation (summary + tail after a compaction; pairing repaired; old results cleared). */
  request: readonly Message[];
  /** The conversation's session (history, budgets, cache health). */
  session: CompactorSession;
  /** Also told what the provider reported for this request (a session kept elsewhere anchors on it). */
  onUsage?: (usage: { inputTokens: number; cachedInputTokens?: number }) => void;
  /**
   * With a `held` call: keeps the call's turn (resolves once it is durable) or drops it. Call it
   * exactly once; later calls do nothing.
   */
  settle?: (kept: boolean) => Promise<void>;
  /** @deprecated The same array as `request`. */
  messages: readonly Message[];
  /** @deprecated Whether `decision` is `compacted`. */
  compacted: boolean;
}

/** Per-conversation Compactor state shared by the framework adapters. */
export interface Conversations {
  project(call: ConversationCall): Promise<ConversationProjection>;
  /** The session of a conversation seen before (and still in memory). */
  session(conversationId: string): CompactorSession | undefined;
  /**
   * The short hashes of a conversation's synced messages, in order, when it is in memory and
   * they are all known (each hashed once, when it was new), else undefined.
   */
  syncedHashes(conversationId: string): readonly string[] | undefined;
  /**
   * Forgets a conversation: its session is closed and, with `sessionDir`, its stored branches
   * and sync point are removed, so the id starts a new conversation when seen again.
   */
  delete(conversationId: string): Promise<void>;
  /** The store directories of a conversation's branches under `sessionDir`, oldest first (the last is current). */
  branches(conversationId: string): string[];
  /**
   * Answers a call of the recall tool from the conversation that holds the id (the most
   * recently used first), pointing at a copy the conversation's last request already holds.
   */
  recall(args: unknown): string;
  /**
   * Closes every session (their stores, when `sessionDir` is set); resolves once each store has
   * released its lock, after its queued writes landed (another server may then open them).
   */
  close(): Promise<void> | void;
}

/** What the adapters add to `createCompactorSession`'s options. */
export interface ConversationOptions {
  /**
   * How many conversations stay open in memory (default 1,000); the least recently used idle
   * one is closed beyond that. With `sessionDir` it is reopened from its store when seen again;
   * without, it starts over. Servers with many chats set this to what their memory allows.
   */
  maxConversations?: number;
  /**
   * How many bytes the open conversations may hold together, each counted by its last call's
   * `bytes`; beyond that the least recently used idle ones are closed as beyond `maxConversations`.
   */
  maxBytes?: number;
  /** Told the id of each conversation closed to make room, so a caller drops what it keeps about it. */
  onEvict?: (conversationId: string) => void;
  /**
   * Offer the model the recall tool, which returns a cleared tool result by the id its stub
   * names (default true); false leaves the tool out.
   */
  recall?: boolean;
}

export const ConversationOptionsSchema = z.object({
  maxConversations: z.number().int().positive().optional(),
  maxBytes: z.number().int().positive().optional(),
  onEvict: z.custom<(id: string) => void>((v) => typeof v === 'function', 'expected a function').optional(),
  recall: z.boolean().optional(),
});

const DEFAULT_MAX_CONVERSATIONS = 1_000;

/** Validates an adapter's options (the session's and {@link ConversationOptions}) as one object. */
export function parseAdapterOptions(options: unknown, where: string): void {
  parseOptions(SessionOptionsSchema.extend(ConversationOptionsSchema.shape), options, where);
}

interface State extends SyncPoint, HeldState {
  session: CompactorSession;
  /** The key of the limits and clearing policy the session runs with (see call-settings.ts). */
  settings: string;
  /** Calls of one conversation run one at a time. */
  queue: Promise<unknown>;
  /** Calls queued or running: a busy conversation is never evicted. */
  active: number;
  /** The messages of the conversation's last projected request. */
  sent?: readonly Message[];
  /** What it holds in memory, as its last call counted it. */
  bytes?: number;
  /** The envelope its session was last given, as JSON ('' for none). */
  envelopeKey?: string;
  /** A write of its store failed: it is reopened from what the store holds on its next call. */
  broken?: boolean;
  /** The point as last saved under `sessionDir` (by this process). */
  saved?: { synced: number; recorded: number; branch: number };
  /** The chain values of the synced messages, when the calls that synced them all gave theirs. */
  chain?: readonly string[];
  /** The branch a fork left, open until a held call on the fork is kept (see heldFork). */
  forkedFrom?: State;
}

/**
 * A conversation's id: the caller's (or the framework's), else derived from the system prompt
 * and the first message, so every call of one agent loop lands in the same state without any
 * configuration while two chats that open alike under different instructions stay apart.
 */
export function conversationIdOf(messages: readonly Message[], given?: string, system?: string): string {
  if (given !== undefined && given !== '') return given;
  return messages.length === 0 && !system
    ? 'empty'
    : `c-${hashOf([system ?? '', messages[0] ?? null]).slice(0, 16)}`;
}

/**
 * Creates the per-conversation state of an adapter. Each conversation gets its own
 * {@link CompactorSession} built from `options` (the same object `createCompactorSession`
 * takes); with `options.sessionDir` each conversation is stored durably in a subdirectory named
 * after its id, so a restarted process continues where it left off.
 */
export function createConversations(options: CompactorSessionOptions & ConversationOptions): Conversations {
  const { maxConversations, maxBytes, onEvict, sessionOptions } = splitOptions(options);
  // Insertion order is recency: a conversation is moved to the end whenever it is used.
  const states = new Map<string, State>();
  // Conversations closed to make room whose store still writes: their lock is released then.
  const closing = new Map<string, Promise<void>>();
  const { sessionDir } = sessionOptions;

  function remember(id: string, state: State, bytes: number | undefined): State {
    states.delete(id);
    states.set(id, state);
    if (bytes !== undefined) state.bytes = bytes;
    evictBeyond(states, { count: maxConversations, bytes: maxBytes }, id, onEvict, closing);
    return state;
  }

  /** The conversation's state, opened on first sight and forked when the framework rewrote it. */
  function stateOf(id: string, call: ConversationCall): State {
    const kept = states.get(id);
    if (kept?.broken) kept.session.close();
    const state = kept !== undefined && !kept.broken ? kept : reopenConversation(id, call, sessionOptions);
    if (!isRewritten(state, call.messages, chainOf(call))) return remember(id, state, call.bytes);
    const fork = forkConversation(id, state, call, sessionOptions);
    // The old branch closes once a call still running on it has finished; the fork waits for
    // that, and for its own sync point to be saved. A held call's fork keeps the old branch
    // open until a call on the fork is kept, and hands it back when none is (see heldFork).
    const saved = fork.queue;
    if (call.held === true) fork.forkedFrom = state;
    fork.queue = state.queue.then(async () => {
      if (call.held !== true) state.session.close();
      await saved;
    });
    return remember(id, fork, call.bytes);
  }

  return {
    // Async so that a bad stored sync point rejects like any other failure of the call.
    async project(call) {
      const id = conversationIdOf(call.messages, call.conversationId, call.system);
      if (closing.size > 0) await untilClosed(states, closing, id);
      const state = stateOf(id, call);
      const run = enqueue(state, () => projectCall(id, state, call, sessionOptions));
      return state.forkedFrom === undefined ? run : heldFork(run, states, id, state, sessionDir);
    },
    recall: (args) => recallAcross(states, args),
    session: (id) => states.get(id)?.session,
    syncedHashes: (id) => allHashes(states.get(id)),
    async delete(id) {
      const state = states.get(id);
      if (state !== undefined) {
        await state.queue;
        state.forkedFrom?.session.close();
        state.session.close();
        if (states.get(id) === state) states.delete(id);
      }
      removeConversation(sessionDir, id);
    },
    branches: (id) => conversationBranches(sessionDir, id),
    close() {
      const landed = [...closing.values()];
      for (const s of states.values()) {
        s.forkedFrom?.session.close();
        s.session.close();
        landed.push(released(s.forkedFrom?.session), released(s.session));
      }
      states.clear();
      return Promise.all(landed).then(() => undefined);
    },
  };
}

/** The conversations' own options apart from what each session is opened with. */
function splitOptions(options: CompactorSessionOptions & ConversationOptions) {
  const {
    maxConversations = DEFAULT_MAX_CONVERSATIONS,
    maxBytes,
    onEvict,
    recall: _recall,
    ...rest
  } = options;
  return { maxConversations, maxBytes, onEvict, sessionOptions: rest };
}

/** Runs a call after the conversation's earlier ones, and keeps the request it made. */
function enqueue(state: State, work: () => Promise<ConversationProjection>): Promise<ConversationProjection> {
  state.active++;
  const run = state.queue.then(async () => {
    const projection = await work();
    state.sent = projection.request;
    return projection;
  });
  // A held call's conversation waits for its settling.
  state.queue = run
    .then((p) => settling.get(p))
    .catch(() => undefined)
    .finally(() => state.active--);
  return run;
}

/** A recall answer from the conversation that holds the id, the most recently used first. */
function recallAcross(states: Map<string, State>, args: unknown): string {
  let answer = answerRecall([], args).text;
  for (const s of [...states.values()].reverse()) {
    answer = s.session.recall(args, s.sent ?? []);
    if (!answer.startsWith(RECALL_NOT_FOUND) && !answer.startsWith(SPAN_NOT_FOUND)) break;
  }
  return answer;
}

/** A conversation's synced hashes when they are all known. */
const allHashes = (state: State | undefined) =>
  state !== undefined && state.hashes.length === state.synced ? state.hashes : undefined;

/** A call's chain when it gives one value per message. */
const chainOf = (call: ConversationCall) =>
  call.chain !== undefined && call.chain.length === call.messages.length ? call.chain : undefined;

/** The synced messages' chain values when both the state and the call have them. */
const bothChains = (state: State, chain: readonly string[] | undefined) =>
  chain !== undefined && state.chain !== undefined && state.chain.length === state.synced
    ? state.chain
    : undefined;

/**
 * A list shorter than what was synced, or a different message at the sync point, is a
 * rewritten conversation (an edited or regenerated message): it forks rather than mix two
 * histories. With chains, a different message anywhere before the sync point counts too.
 */
function isRewritten(state: State, messages: readonly Message[], chain?: readonly string[]): boolean {
  if (messages.length < state.synced) return true;
  if (state.synced === 0) return false;
  const synced = bothChains(state, chain);
  if (synced !== undefined) return synced[state.synced - 1] !== chain![state.synced - 1];
  // A chain given to a session without one (reopened from its store): every message is checked
  // once, by its hash, and the chain is kept from then on.
  if (chain !== undefined && state.hashes.length === state.synced)
    return commonPrefix(state.hashes, messages) < state.synced;
  return hashOf(messages[state.synced - 1]) !== state.lastHash;
}

export { catalogCapacity } from './call-settings.js';

/** A session for a conversation's branch (resuming its store under `sessionDir`), from `point`. */
function openConversation(
  id: string,
  call: ConversationCall,
  options: CompactorSessionOptions,
  point: SyncPoint,
  history?: readonly Message[],
): State {
  const { sessionDir, history: _history, storeLock, ...shared } = options;
  const settings = callSettings(call, options);
  const dir = conversationDir(sessionDir, id, point.branch);
  const session = createCompactorSession({
    ...shared,
    // Queued writes: one conversation waiting for its disk never holds the others' calls.
    ...(dir !== undefined ? { store: fileStore(dir, { lock: storeLock, queued: true }) } : {}),
    ...(history !== undefined ? { history } : {}),
    ...(call.standalone !== undefined ? { standalone: call.standalone } : {}),
    ...(call.inline !== undefined ? { inline: call.inline } : {}),
    ...settings,
  });
  const caughtUp = { ...point, hashes: [...point.hashes] };
  if (dir !== undefined) catchUpSyncPoint(caughtUp, recordedMessages(session));
  return { session, settings: settingsKey(settings), ...caughtUp, queue: Promise.resolve(), active: 0 };
}

/** How many messages a session's store recorded (none without a store). */
function recordedCount(session: CompactorSession): number {
  let n = 0;
  for (const e of session.store?.events() ?? []) if (e.type === 'message.appended') n++;
  return n;
}

/** The messages a session's store recorded, in order (empty without a store). */
function recordedMessages(session: CompactorSession): unknown[] {
  return (session.store?.events() ?? []).flatMap((e) => (e.type === 'message.appended' ? [e.message] : []));
}

/**
 * A conversation opened from what its directory holds. The point read is the one saved, so a
 * call that only adds what the store records needs no save (see toldByStore): not even the
 * first call of a new conversation.
 */
function reopenConversation(id: string, call: ConversationCall, options: CompactorSessionOptions): State {
  const point = readSyncPoint(options.sessionDir, id);
  const state = openConversation(id, call, options, point);
  if (options.sessionDir !== undefined && point.recorded !== undefined)
    state.saved = { synced: point.synced, recorded: point.recorded, branch: point.branch };
  return state;
}

/**
 * A new branch for a rewritten conversation, from the longest prefix it shares with what was
 * synced. When the messages after that prefix are still verbatim at the end of the session's
 * history, the branch starts from that history without them, so an earlier compaction (its
 * summary and boundary) carries over; otherwise the branch starts from the framework's list.
 * With `sessionDir` the branch gets its own store directory; the old one stays as it was.
 */
function forkConversation(
  id: string,
  old: State,
  call: ConversationCall,
  options: CompactorSessionOptions,
): State {
  const { sessionDir } = options;
  const chain = chainOf(call);
  const oldChain = bothChains(old, chain);
  const shared =
    oldChain !== undefined && old.hashes.length === old.synced
      ? sharedLinks(oldChain, chain!)
      : commonPrefix(old.hashes, call.messages);
  const dropped = old.synced - shared;
  const live = old.session.history;
  const tail = live.slice(live.length - dropped).map(messageHash);
  const keeps =
    shared > 0 &&
    old.hashes.length === old.synced &&
    live.length > dropped &&
    tail.every((h, i) => h === old.hashes[shared + i]);
  const branch = sessionDir !== undefined ? nextBranch(sessionDir, id, old.branch) : old.branch;
  const point: SyncPoint = keeps
    ? {
        synced: shared,
        lastHash: hashOf(call.messages[shared - 1]),
        hashes: old.hashes.slice(0, shared),
        branch,
      }
    : { synced: 0, lastHash: '', hashes: [], branch };
  const state: State = openConversation(
    id,
    call,
    options,
    point,
    keeps ? live.slice(0, live.length - dropped) : undefined,
  );
  if (sessionDir !== undefined) state.recorded = recordedCount(state.session);
  if (keeps && chain !== undefined && state.synced === shared) state.chain = chain.slice(0, shared);
  // A held call's fork saves its point once the call is kept.
  state.queue = call.held === true ? Promise.resolve() : saveSyncPoint(state, sessionDir, id);
  return state;
}

/** How many leading messages of `messages` match the synced hashes. */
function commonPrefix(hashes: readonly string[], messages: readonly Message[]): number {
  let n = 0;
  while (n < hashes.length && n < messages.length && hashes[n] === messageHash(messages[n])) n++;
  return n;
}

/** The first branch number after `current` whose store directory is not taken. */
function nextBranch(sessionDir: string, id: string, current: number): number {
  let branch = current + 1;
  while (existsSync(join(sessionDir, branchName(id, branch)))) branch++;
  return branch;
}

/** The conversation's branch directories that exist, oldest first. */
function conversationBranches(sessionDir: string | undefined, id: string): string[] {
  if (sessionDir === undefined || !existsSync(sessionDir)) return [];
  const base = dirName(id);
  const number = (name: string) => (name === base ? 0 : Number(name.slice(`${base}.fork-`.length)));
  return readdirSync(sessionDir)
    .filter(
      (name) =>
        name === base ||
        (/^\d+$/.test(name.slice(`${base}.fork-`.length)) && name.startsWith(`${base}.fork-`)),
    )
    .sort((a, b) => number(a) - number(b))
    .map((name) => join(sessionDir, name));
}

/** Removes a conversation's stored branches and sync point. */
function removeConversation(sessionDir: string | undefined, id: string): void {
  for (const dir of conversationBranches(sessionDir, id)) rmSync(dir, { recursive: true, force: true });
  const file = syncFile(sessionDir, id);
  if (file !== undefined) rmSync(file, { force: true });
}

/**
 * Whether the saved sync point needs no new save: since it was saved the store recorded
 * exactly the messages synced after it, one for one, so reopening catches the point up from
 * the store (catchUpSyncPoint) to where a save would put it. A request then pays one fsync
 * (its messages in the store) instead of three (and the point's file and directory).
 */
function toldByStore(state: State, synced: number): boolean {
  const { saved, recorded } = state;
  return (
    saved !== undefined &&
    recorded !== undefined &&
    saved.branch === state.branch &&
    recorded - saved.recorded === synced - saved.synced
  );
}

/**
 * Waits until what the session's store was given is on disk. A failed write leaves the store
 * at its last commit; the conversation is then reopened from it on its next call, so the
 * failed call leaves nothing behind.
 */
async function durable(state: State): Promise<void> {
  try {
    await state.session.store?.flush?.();
  } catch (e) {
    state.broken = true;
    throw e;
  }
}

/** The names a projection had before it kept the turn's own (`request`, `decision`). */
export function deprecatedNames(request: readonly Message[], decision: ConversationProjection['decision']) {
  return { messages: request, compacted: decision === 'compacted' };
}

/** One call: the new messages go through the session's turn; the projected request comes back. */
async function projectCall(
  id: string,
  state: State,
  call: ConversationCall,
  options: CompactorSessionOptions,
): Promise<ConversationProjection> {
  const { sessionDir } = options;
  const { messages } = call;
  const { session } = state;
  // A call with other limits or another clearing policy than the last applies them.
  state.settings = applyCallSettings(session, state.settings, call, options);
  // The envelope is read again (validated, its tokens counted) only when it changed: an agent
  // sends the same system prompt and tools with every request.
  const envelope =
    call.system !== undefined || (call.tools?.length ?? 0) > 0
      ? { provider: 'framework', model: call.model?.id ?? 'unknown', system: call.system, tools: call.tools }
      : undefined;
  const envelopeKey = envelope === undefined ? '' : JSON.stringify(envelope);
  const previousEnvelope = state.envelopeKey;
  if (state.envelopeKey !== envelopeKey) {
    session.setEnvelope(envelope);
    state.envelopeKey = envelopeKey;
  }
  const pending = messages.slice(state.synced);
  const before = session.history.length;
  const sync = async () => {
    await durable(state);
    if (sessionDir !== undefined) state.recorded = recordedCount(session);
    const skip = toldByStore(state, messages.length);
    await advanceSyncPoint(state, messages, skip ? undefined : sessionDir, id);
    // The call's messages were checked against the synced ones before its turn: its chain is the point's.
    state.chain = chainOf(call);
    if (!skip && sessionDir !== undefined && state.recorded !== undefined)
      state.saved = { synced: state.synced, recorded: state.recorded, branch: state.branch };
  };

  if (call.held === true)
    return heldCall(
      state,
      call,
      { pending, envelopeKey: previousEnvelope },
      keptPoint(id, state, options),
      (turn) => projectionOf(id, session, turn),
    );
  // A turn that fails or is cancelled after storing the new messages keeps them: they are
  // synced all the same, so the same call again adds them once, not twice.
  const keptAfterFailure = () => pending.length > 0 && session.history.length === before + pending.length;
  let turn;
  try {
    turn = await session.runTurn({ pending, ...(call.signal !== undefined ? { signal: call.signal } : {}) });
  } catch (e) {
    // The call's own failure is what its caller needs to hear, not a failed save after it.
    if (keptAfterFailure()) await sync().catch(() => undefined);
    throw e;
  }
  if (turn.decision === 'cancelled') {
    if (keptAfterFailure()) await sync().catch(() => undefined);
    throw new CancelledError('the call was cancelled before its request was ready');
  }
  // Saved before the request goes on (without blocking other requests): a save that fails
  // fails this call instead of surfacing later, and a deleted conversation is not written again.
  await sync();
  return projectionOf(id, session, turn);
}

/**
 * For a held call whose turn is kept: its point (moved in memory when its turn ran) as it is
 * now, saved once the turn is durable, when the store does not tell it. Taken at once: the
 * conversation's next call may move the point before this turn's fsync has ended.
 */
function keptPoint(id: string, state: State, { sessionDir }: CompactorSessionOptions): KeptPoint {
  return () => {
    const recorded = sessionDir === undefined ? undefined : recordedCount(state.session);
    state.recorded = recorded;
    const skip = toldByStore(state, state.synced) || sessionDir === undefined || recorded === undefined;
    const point: SyncPoint = { ...pointOf(state), ...(recorded === undefined ? {} : { recorded }) };
    const save = async () => {
      await durable(state);
      if (skip) return;
      await saveSyncPoint(point, sessionDir, id);
      state.saved = { synced: point.synced, recorded: recorded!, branch: point.branch };
    };
    return { save, saves: !skip };
  };
}

/** The fields of a sync point (its hashes are replaced when they grow, never changed in place). */
const pointOf = ({ synced, lastHash, hashes, branch }: SyncPoint): SyncPoint => ({
  synced,
  lastHash,
  hashes,
  branch,
});

/** What a call's turn made into the projection the caller sends. */
function projectionOf(
  id: string,
  session: CompactorSession,
  turn: SessionTurnResult,
): ConversationProjection {
  // The turn's own request: the one the machine made fit the window (prepareRequest agrees).
  const request = turn.request ?? session.prepareRequest().messages;
  const { decision, strategy, summaryCalls, compaction, summaryCache } = turn;
  return {
    conversationId: id,
    request,
    decision,
    strategy,
    summaryCalls,
    compaction,
    summaryCache,
    session,
    ...deprecatedNames(request, decision),
  };
}
