import { textOf, type Json, type Message } from '../messages/message.js';
import type { ToolSchema } from './types.js';

/**
 * Canonical messages → OpenAI Chat Completions messages (wire-formats §2.1), used by the
 * Local summary client on Chat-compatible routes. Opaque provider items are not sent
 * (Chat has no slot for them); tool calls and results keep their pairing.
 */

function userContent(m: Message): Json {
  if (typeof m.content === 'string') return m.content;
  const parts: Json[] = [];
  for (const p of m.content) {
    if (p.type === 'text') parts.push({ type: 'text', text: p.text });
    else if (p.type === 'image') {
      const url = p.url ?? (p.data ? `data:${p.mimeType ?? 'image/png'};base64,${p.data}` : undefined);
      if (url) parts.push({ type: 'image_url', image_url: { url } });
    } else parts.push({ type: 'text', text: `[file ${p.filename ?? p.fileId ?? p.url ?? ''}]` });
  }
  return parts;
}

/** Converts canonical messages to Chat Completions messages. */
export function toChatMessages(messages: readonly Message[]): Json[] {
  const out: Json[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        out.push({ role: 'system', content: textOf(m.content) });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(m) });
        break;
      case 'assistant': {
        const text = textOf(m.content);
        const calls = m.toolCalls ?? [];
        if (text.length === 0 && calls.length === 0) break; // opaque-only marker: nothing Chat can carry
        const a: { [k: string]: Json } = { role: 'assistant', content: text.length > 0 ? text : null };
        if (calls.length > 0) {
          a.tool_calls = calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.freeformInput ?? c.arguments },
          }));
        }
        out.push(a);
        break;
      }
      case 'tool':
        out.push({ role: 'tool', tool_call_id: m.toolCallId ?? '', content: textOf(m.content) });
        break;
    }
  }
  return out;
}

/** Tool catalog in Chat form (listed but disabled by `tool_choice: "none"`, S2). */
export function toChatTools(tools: readonly ToolSchema[]): Json[] {
  return tools.map((t) => ({
    type: 'function',
    function: {
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: (t.parameters ?? { type: 'object', properties: {} }) as Json,
    },
  }));
}
