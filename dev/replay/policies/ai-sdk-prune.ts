import { pruneMessages, type ModelMessage } from 'ai';
import { textOf, type Message, type ToolCall } from '../../../src/messages/message.js';
import type { RetentionPolicy } from '../types.js';

/** The configuration of the AI SDK's documented `pruneMessages` example, applied before every request. */
export const AI_SDK_PRUNE_OPTIONS = {
  reasoning: 'before-last-message',
  toolCalls: 'before-last-2-messages',
  emptyMessages: 'remove',
} as const;

type Part = object;

/** Where each AI SDK object came from, so untouched content maps back to the same canonical objects. */
interface PartMaps {
  callOf: WeakMap<Part, ToolCall>;
  resultOf: WeakMap<Part, Message>;
  ownerOf: WeakMap<Part, Message>;
  original: WeakMap<ModelMessage, Message>;
}

/** Canonical → AI SDK ModelMessage, remembering which part came from which call or result. */
function toModelMessages(
  history: readonly Message[],
  { callOf, resultOf, ownerOf, original }: PartMaps,
): ModelMessage[] {
  return history.map((m): ModelMessage => {
    const text = textOf(m.content);
    let out: ModelMessage;
    if (m.role === 'system') out = { role: 'system', content: text };
    else if (m.role === 'user') out = { role: 'user', content: text };
    else if (m.role === 'tool') {
      const part = {
        type: 'tool-result' as const,
        toolCallId: m.toolCallId ?? '',
        toolName: m.toolName ?? 'tool',
        output: { type: 'text' as const, value: text },
      };
      resultOf.set(part, m);
      out = { role: 'tool', content: [part] };
    } else {
      const parts: Array<
        | { type: 'text'; text: string }
        | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
      > = [];
      if (text) parts.push({ type: 'text', text });
      for (const c of m.toolCalls ?? []) {
        const part = { type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.arguments };
        callOf.set(part, c);
        parts.push(part);
      }
      for (const p of parts) ownerOf.set(p, m);
      out = { role: 'assistant', content: parts };
    }
    original.set(out, m);
    return out;
  });
}

/** AI SDK → canonical: untouched parts map back to the very same canonical objects. */
function fromModelMessages(
  pruned: ModelMessage[],
  { callOf, resultOf, ownerOf, original }: PartMaps,
): Message[] {
  const out: Message[] = [];
  for (const mm of pruned) {
    const same = original.get(mm);
    if (same) {
      out.push(same);
      continue;
    }
    if (mm.role === 'tool') {
      for (const part of mm.content) {
        const r = resultOf.get(part);
        if (r) out.push(r);
      }
      continue;
    }
    if (mm.role !== 'assistant' || typeof mm.content === 'string') continue;
    // A pruned copy of an assistant message: the original minus the calls that were removed.
    const owner = mm.content.map((p) => ownerOf.get(p)).find((m) => m !== undefined);
    if (!owner) continue;
    const calls = mm.content.map((p) => callOf.get(p)).filter((c): c is ToolCall => c !== undefined);
    if (calls.length === (owner.toolCalls?.length ?? 0)) {
      out.push(owner);
      continue;
    }
    const next: Message = { ...owner, toolCalls: calls };
    if (calls.length === 0) delete next.toolCalls;
    out.push(next);
  }
  return out;
}

/**
 * The Vercel AI SDK's real `pruneMessages` (ai 6.x) with its documented example
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
    const maps: PartMaps = {
      callOf: new WeakMap(),
      resultOf: new WeakMap(),
      ownerOf: new WeakMap(),
      original: new WeakMap(),
    };
    const pruned = pruneMessages({ messages: toModelMessages(history, maps), ...AI_SDK_PRUNE_OPTIONS });
    return Promise.resolve(fromModelMessages(pruned, maps));
  },
};
