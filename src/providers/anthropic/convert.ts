import { textOf, type Json, type Message } from '../../messages/message.js';
import {
  isAnthropicCompaction,
  isAnthropicThinking,
  isNativeSummary,
  itemsOf,
  type JsonObject,
} from '../opaque-items.js';
import { wireTools } from '../tool-catalog.js';
import type { ToolSchema } from '../types.js';

/**
 * Canonical messages ⇄ Anthropic Messages content blocks.
 * The latest compaction block is replayed raw as the first Anthropic message; messages
 * before it are summarised by it and are not sent; at most one compaction block goes out.
 * Assistant blocks are rebuilt in the order compaction, thinking, text, tool_use.
 */

/** The request pieces derived from canonical history. */
export interface AnthropicConversation {
  system?: string;
  messages: { role: 'user' | 'assistant'; content: Json[] }[];
}

function parseInput(args: string): Json {
  try {
    const v = JSON.parse(args) as Json;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { raw: args };
  }
}

function userBlocks(m: Message): Json[] {
  if (typeof m.content === 'string') return m.content.length > 0 ? [{ type: 'text', text: m.content }] : [];
  const blocks: Json[] = [];
  for (const p of m.content) {
    if (p.type === 'text') blocks.push({ type: 'text', text: p.text });
    else if (p.type === 'image') {
      blocks.push(
        p.data
          ? { type: 'image', source: { type: 'base64', media_type: p.mimeType ?? 'image/png', data: p.data } }
          : { type: 'image', source: { type: 'url', url: p.url ?? '' } },
      );
    } else blocks.push({ type: 'text', text: `[file ${p.filename ?? p.fileId ?? p.url ?? ''}]` });
  }
  return blocks;
}

/** Index of the last message carrying an Anthropic compaction block, or -1. */
export function lastCompactionIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'assistant' && itemsOf(messages[i]).some(isAnthropicCompaction)) return i;
  }
  return -1;
}

/** A tool result as a `tool_result` block, or as plain text when its call was never sent. */
function toolResultBlock(m: Message, seenCalls: ReadonlySet<string>): Json {
  const id = m.toolCallId ?? '';
  const text = textOf(m.content);
  return seenCalls.has(id) ? { type: 'tool_result', tool_use_id: id, content: text } : { type: 'text', text };
}

/**
 * Converts canonical history to an Anthropic conversation. Leading system messages become
 * `system`; later system messages become user text. Tool results become `tool_result`
 * blocks in a user message; results whose call was never sent become plain user text.
 */
export function toAnthropicConversation(history: readonly Message[], system?: string): AnthropicConversation {
  const boundary = lastCompactionIndex(history);
  const systemTexts: string[] = system ? [system] : [];
  const out: AnthropicConversation['messages'] = [];
  const seenCalls = new Set<string>();
  const push = (role: 'user' | 'assistant', blocks: Json[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    // Merge same-role neighbours, except never into the leading compaction message.
    if (last && last.role === role && !(out.length === 1 && boundary >= 0)) last.content.push(...blocks);
    else out.push({ role, content: [...blocks] });
  };

  /** Thinking (from `items`), text, then tool_use blocks of one assistant message. */
  const assistantBlocks = (m: Message, items: readonly JsonObject[]): Json[] => {
    const blocks: Json[] = items.filter(isAnthropicThinking);
    // A native marker's text is its block's summary: the block itself carries it.
    const text = isNativeSummary(m) ? '' : textOf(m.content);
    if (text.length > 0) blocks.push({ type: 'text', text });
    for (const c of m.toolCalls ?? []) {
      seenCalls.add(c.id);
      blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: parseInput(c.arguments) });
    }
    return blocks;
  };

  let leading = true;
  history.forEach((m, i) => {
    if (leading && m.role === 'system') {
      // A history system message the given system prompt already carries is not sent twice.
      const text = textOf(m.content);
      if (!systemTexts.some((t) => t.includes(text))) systemTexts.push(text);
      return;
    }
    leading = false;
    if (i < boundary) return; // summarised by the compaction block
    if (i === boundary) {
      // The block opens the window; what the same turn said after it (thinking, text,
      // tool_use of an unpaused response) follows it, so nothing after the boundary is lost.
      const items = itemsOf(m);
      let at = items.length - 1;
      while (at > 0 && !isAnthropicCompaction(items[at])) at--;
      out.push({ role: 'assistant', content: [items[at], ...assistantBlocks(m, items.slice(at + 1))] });
      return;
    }
    switch (m.role) {
      case 'system':
        push('user', [{ type: 'text', text: textOf(m.content) }]);
        break;
      case 'user':
        push('user', userBlocks(m));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(m, itemsOf(m)));
        break;
      case 'tool':
        push('user', [toolResultBlock(m, seenCalls)]);
        break;
    }
  });
  return { ...(systemTexts.length > 0 ? { system: systemTexts.join('\n\n') } : {}), messages: out };
}

/** Tool catalog in Anthropic form (listed, tool use disabled with `tool_choice: {type:"none"}`). */
export function toAnthropicTools(tools: readonly ToolSchema[]): Json[] {
  return wireTools(tools, 'messages', (t) => ({
    name: t.name,
    ...(t.description !== undefined ? { description: t.description } : {}),
    input_schema: (t.parameters ?? { type: 'object', properties: {} }) as Json,
  }));
}
