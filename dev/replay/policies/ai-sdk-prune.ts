import { pruneMessages, type ModelMessage } from 'ai';
import { fromModelMessages, toModelMessages } from '../../../src/adapters/ai-sdk/index.js';
import type { Message } from '../../../src/messages/message.js';
import type { RetentionPolicy } from '../types.js';

/** The configuration of the AI SDK's documented `pruneMessages` example, applied before every request. */
export const AI_SDK_PRUNE_OPTIONS = {
  reasoning: 'before-last-message',
  toolCalls: 'before-last-2-messages',
  emptyMessages: 'remove',
} as const;

/**
 * Maps pruned ModelMessages back to canonical ones. Untouched messages are the very objects
 * `toModelMessages` made, so they map back to the same canonical objects (1:1: replay histories
 * carry no AI SDK grouping); a pruned copy of an assistant message keeps its owner's fields and
 * the calls that survived, by id, so their argument text stays byte-identical.
 */
function backToCanonical(
  history: readonly Message[],
  models: ModelMessage[],
  pruned: ModelMessage[],
): Message[] {
  const original = new WeakMap<ModelMessage, Message>();
  const ownerOf = new WeakMap<object, Message>();
  models.forEach((mm, i) => {
    original.set(mm, history[i]);
    if (typeof mm.content !== 'string') for (const part of mm.content) ownerOf.set(part, history[i]);
  });
  const out: Message[] = [];
  for (const mm of pruned) {
    const same = original.get(mm);
    if (same) {
      out.push(same);
      continue;
    }
    const owner =
      typeof mm.content === 'string' ? undefined : mm.content.map((p) => ownerOf.get(p)).find(Boolean);
    const converted = fromModelMessages([mm]);
    if (!owner) {
      out.push(...converted);
      continue;
    }
    const kept = new Set(converted.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)));
    const calls = (owner.toolCalls ?? []).filter((c) => kept.has(c.id));
    const next: Message = { ...owner, toolCalls: calls };
    if (calls.length === 0) delete next.toolCalls;
    out.push(next);
  }
  return out;
}

/**
 * The Vercel AI SDK's real `pruneMessages` (ai 7.x) with its documented example
 * configuration: reasoning before the last message and tool calls/results before the last
 * 2 messages are removed, empty messages dropped. It has no trigger and no token count, so
 * it runs on every request, as in the documented route handler.
 */
export const aiSdkPrunePolicy: RetentionPolicy = {
  name: 'ai-sdk-prune',
  description:
    "Vercel AI SDK pruneMessages (real library): toolCalls 'before-last-2-messages', every request.",
  source: 'library',
  project(history) {
    const models = toModelMessages(history);
    const pruned = pruneMessages({ messages: models, ...AI_SDK_PRUNE_OPTIONS });
    return Promise.resolve(backToCanonical(history, models, pruned));
  },
};
