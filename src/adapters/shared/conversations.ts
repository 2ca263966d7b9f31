import type { Message } from '../../messages/message.js';
import { lookupModel } from '../../providers/catalog.js';
import {
  createCompactorSession,
  type CompactorSession,
  type CompactorSessionOptions,
  type RequestEnvelope,
} from '../../session/index.js';
import { advanceSyncPoint, conversationDir, hashOf, readSyncPoint, type SyncPoint } from './sync-point.js';

/** One model call of a framework agent loop, in canonical messages. */
export interface ConversationCall {
  /** The caller's conversation id; default: derived from the first message (see {@link conversationIdOf}). */
  conversationId?: string;
  /** The request's system prompt: never compacted, counted as prefix. */
  system?: string;
  /** Tool schemas of the request: never compacted, counted as prefix. */
  tools?: RequestEnvelope['tools'];
  /** The whole conversation as the framework sends it (without the system prompt). */
  messages: readonly Message[];
  /** The model's id (and provider name), to look its window up in the catalog when `limits.capacity` is absent. */
  model?: { provider?: string; id: string };
}

/** What the model is sent instead, and the conversation it belongs to. */
export interface ConversationProjection {
  conversationId: string;
  /** The projected conversation (summary + tail after a compaction; pairing repaired; old results cleared). */
  messages: readonly Message[];
  /** This call compacted the conversation. */
  compacted: boolean;
  /** The conversation's session (history, budgets, cache health). */
  session: CompactorSession;
}

/** Per-conversation Compactor state shared by the framework adapters. */
export interface Conversations {
  project(call: ConversationCall): Promise<ConversationProjection>;
  /** The session of a conversation seen before. */
  session(conversationId: string): CompactorSession | undefined;
  /** Closes every session (their stores, when `sessionDir` is set). */
  close(): void;
}

interface State extends SyncPoint {
  session: CompactorSession;
  /** Calls of one conversation run one at a time. */
  queue: Promise<unknown>;
}

/**
 * A conversation's id: the caller's, else derived from its first message (the user's goal),
 * so every call of one agent loop lands in the same state without any configuration.
 */
export function conversationIdOf(messages: readonly Message[], given?: string): string {
  if (given !== undefined && given !== '') return given;
  return messages.length === 0 ? 'empty' : `c-${hashOf(messages[0]).slice(0, 16)}`;
}

/** The model's window from the bundled catalog, by the framework's provider name and model id. */
export function catalogCapacity(model: ConversationCall['model']): number | undefined {
  if (!model || model.id === '') return undefined;
  const provider = (model.provider ?? '*').split('.')[0].toLowerCase();
  return lookupModel(provider, provider, model.id)?.contextWindow;
}

/**
 * Creates the per-conversation state of an adapter. Each conversation gets its own
 * {@link CompactorSession} built from `options` (the same object `createCompactorSession`
 * takes); with `options.sessionDir` each conversation is stored durably in a subdirectory named
 * after its id, so a restarted process continues where it left off.
 */
export function createConversations(options: CompactorSessionOptions): Conversations {
  const states = new Map<string, State>();
  const { sessionDir } = options;

  function opened(id: string, call: ConversationCall): State {
    const state = openConversation(id, call, options);
    states.set(id, state);
    return state;
  }

  /** The conversation's state, opened on first sight and started over when the framework rewrote it. */
  function stateOf(id: string, call: ConversationCall): State {
    const state = states.get(id) ?? opened(id, call);
    if (!isRewritten(state, call.messages)) return state;
    // A durable conversation cannot start over: its store already holds the old history.
    if (sessionDir !== undefined)
      throw new Error(
        `compactor: conversation ${id} was rewritten (its earlier messages changed); give it a new conversation id`,
      );
    state.session.close();
    return opened(id, call);
  }

  return {
    project(call) {
      const id = conversationIdOf(call.messages, call.conversationId);
      const state = stateOf(id, call);
      const run = state.queue.then(() => projectCall(id, state, call, sessionDir));
      state.queue = run.catch(() => undefined);
      return run;
    },
    session: (id) => states.get(id)?.session,
    close() {
      for (const s of states.values()) s.session.close();
      states.clear();
    },
  };
}

/**
 * A list shorter than what was synced, or a different message at the sync point, is a
 * rewritten conversation: it starts over rather than mix two histories.
 */
function isRewritten(state: State, messages: readonly Message[]): boolean {
  return (
    messages.length < state.synced ||
    (state.synced > 0 && hashOf(messages[state.synced - 1]) !== state.lastHash)
  );
}

/** A new session for a conversation (resuming its store and sync point under `sessionDir`). */
function openConversation(id: string, call: ConversationCall, options: CompactorSessionOptions): State {
  const { sessionDir, history: _history, ...shared } = options;
  const capacity = options.limits?.capacity ?? catalogCapacity(call.model);
  const dir = conversationDir(sessionDir, id);
  const session = createCompactorSession({
    ...shared,
    ...(dir !== undefined ? { sessionDir: dir } : {}),
    limits: { ...options.limits, ...(capacity !== undefined ? { capacity } : {}) },
  });
  return { session, ...readSyncPoint(sessionDir, id), queue: Promise.resolve() };
}

/** One call: the new messages go through the session's turn; the projected request comes back. */
async function projectCall(
  id: string,
  state: State,
  call: ConversationCall,
  sessionDir: string | undefined,
): Promise<ConversationProjection> {
  const { messages } = call;
  const { session } = state;
  session.setEnvelope(
    call.system !== undefined || (call.tools?.length ?? 0) > 0
      ? { provider: 'framework', model: call.model?.id ?? 'unknown', system: call.system, tools: call.tools }
      : undefined,
  );
  const turn = await session.runTurn({ pending: messages.slice(state.synced) });
  advanceSyncPoint(state, messages, sessionDir, id);
  return {
    conversationId: id,
    // The turn's own request: the one the machine made fit the window (prepareRequest agrees).
    messages: turn.request ?? session.prepareRequest().messages,
    compacted: turn.decision === 'compacted',
    session,
  };
}
