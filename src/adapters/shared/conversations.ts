import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../io/atomic-write.js';
import type { Message } from '../../messages/message.js';
import { lookupModel } from '../../providers/catalog.js';
import {
  createCompactorSession,
  type CompactorSession,
  type CompactorSessionOptions,
  type RequestEnvelope,
} from '../../session/index.js';

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

interface State {
  session: CompactorSession;
  /** How many of the framework's messages the session already holds (or has compacted). */
  synced: number;
  /** Hash of the last synced message: a different one means the framework's list was rewritten. */
  lastHash: string;
  /** Calls of one conversation run one at a time. */
  queue: Promise<unknown>;
}

const hash = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/**
 * A conversation's id: the caller's, else derived from its first message (the user's goal),
 * so every call of one agent loop lands in the same state without any configuration.
 */
export function conversationIdOf(messages: readonly Message[], given?: string): string {
  if (given !== undefined && given !== '') return given;
  return messages.length === 0 ? 'empty' : `c-${hash(messages[0]).slice(0, 16)}`;
}

/** A directory name for an id: itself when plainly safe, else a hash. */
function dirName(id: string): string {
  return /^[A-Za-z0-9._-]{1,80}$/.test(id) && !/^\.+$/.test(id) ? id : `h-${hash(id).slice(0, 24)}`;
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
  const { sessionDir, history: _history, ...shared } = options;

  function syncFile(id: string): string | undefined {
    return sessionDir === undefined ? undefined : join(sessionDir, `${dirName(id)}.sync.json`);
  }

  function open(id: string, call: ConversationCall): State {
    const capacity = options.limits?.capacity ?? catalogCapacity(call.model);
    const dir = sessionDir === undefined ? undefined : join(sessionDir, dirName(id));
    if (sessionDir !== undefined) mkdirSync(sessionDir, { recursive: true });
    const session = createCompactorSession({
      ...shared,
      ...(dir !== undefined ? { sessionDir: dir } : {}),
      limits: { ...options.limits, ...(capacity !== undefined ? { capacity } : {}) },
    });
    const file = syncFile(id);
    if (file !== undefined && existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { synced: number; lastHash: string };
      return { session, synced: saved.synced, lastHash: saved.lastHash, queue: Promise.resolve() };
    }
    return { session, synced: 0, lastHash: '', queue: Promise.resolve() };
  }

  async function step(id: string, state: State, call: ConversationCall): Promise<ConversationProjection> {
    const { messages } = call;
    const { session } = state;
    session.setEnvelope(
      call.system !== undefined || (call.tools?.length ?? 0) > 0
        ? {
            provider: 'framework',
            model: call.model?.id ?? 'unknown',
            system: call.system,
            tools: call.tools,
          }
        : undefined,
    );
    const pending = messages.slice(state.synced);
    const turn = await session.runTurn({ pending });
    state.synced = messages.length;
    state.lastHash = messages.length > 0 ? hash(messages[messages.length - 1]) : '';
    const file = syncFile(id);
    if (file !== undefined)
      writeFileAtomic(file, JSON.stringify({ synced: state.synced, lastHash: state.lastHash }));
    return {
      conversationId: id,
      messages: session.prepareRequest().messages,
      compacted: turn.decision === 'compacted',
      session,
    };
  }

  return {
    project(call) {
      const id = conversationIdOf(call.messages, call.conversationId);
      let state = states.get(id);
      if (state === undefined) {
        state = open(id, call);
        states.set(id, state);
      }
      // A list shorter than what was synced, or a different message at the sync point, is a
      // rewritten conversation: start over rather than mix two histories.
      const rewritten =
        call.messages.length < state.synced ||
        (state.synced > 0 && hash(call.messages[state.synced - 1]) !== state.lastHash);
      if (rewritten) {
        if (sessionDir !== undefined)
          throw new Error(
            `compactor: conversation ${id} was rewritten (its earlier messages changed); give it a new conversation id`,
          );
        state.session.close();
        state = open(id, call);
        states.set(id, state);
      }
      const current = state;
      const run = current.queue.then(() => step(id, current, call));
      current.queue = run.catch(() => undefined);
      return run;
    },
    session: (id) => states.get(id)?.session,
    close() {
      for (const s of states.values()) s.session.close();
      states.clear();
    },
  };
}
