import { z } from 'zod';
import { importedResponsesItems } from '../../formats/index.js';
import { textOf, type Json, type Message } from '../../messages/message.js';
import { asItem, itemsOf, isResponsesOpaque, type JsonObject } from '../opaque-items.js';

/**
 * Canonical messages ⇄ OpenAI Responses items. Opaque items in
 * `reasoningDetails` (encrypted reasoning, compaction items) are emitted verbatim before
 * their message; items that came back from `/responses/compact` replay byte for byte.
 */

/** Metadata key holding the raw Responses item a canonical message was built from. */
export const RESPONSES_ITEM_KEY = 'responsesItem';

function contentParts(m: Message, textType: 'input_text' | 'output_text'): Json[] {
  if (typeof m.content === 'string')
    return [
      textType === 'output_text'
        ? { type: textType, text: m.content, annotations: [] }
        : { type: textType, text: m.content },
    ];
  const parts: Json[] = [];
  for (const p of m.content) {
    if (p.type === 'text')
      parts.push(
        textType === 'output_text'
          ? { type: textType, text: p.text, annotations: [] }
          : { type: textType, text: p.text },
      );
    else if (p.type === 'image' && textType === 'input_text') {
      const url = p.url ?? (p.data ? `data:${p.mimeType ?? 'image/png'};base64,${p.data}` : undefined);
      if (url) parts.push({ type: 'input_image', image_url: url, detail: p.detail ?? 'auto' });
    } else if (p.type === 'file' && textType === 'input_text') {
      const f: JsonObject = { type: 'input_file' };
      if (p.fileId) f.file_id = p.fileId;
      if (p.data) f.file_data = p.data;
      if (p.url) f.file_url = p.url;
      if (p.filename) f.filename = p.filename;
      parts.push(f);
    }
  }
  return parts;
}

/** Text of a raw Responses message item (input_text/output_text/refusal parts). */
export function textOfResponsesItem(item: JsonObject): string {
  const c = item.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c
    .map((p) => {
      const o = asItem(p);
      if (!o) return '';
      if (typeof o.text === 'string') return o.text;
      return typeof o.refusal === 'string' ? o.refusal : '';
    })
    .join('');
}

/** The stored raw item, when the message still says what it said when it arrived. */
function storedItem(m: Message): JsonObject | undefined {
  const raw = m.metadata?.[RESPONSES_ITEM_KEY];
  const item = raw === undefined ? undefined : asItem(raw);
  return item && textOfResponsesItem(item) === textOf(m.content) ? item : undefined;
}

/** Output text parts need `annotations` on the wire (ResponseOutputText); keep any given. */
function withAnnotations(item: Json): Json {
  const it = asItem(item);
  if (!it || it.type !== 'message' || it.role !== 'assistant' || !Array.isArray(it.content)) return item;
  return {
    ...it,
    content: it.content.map((p) => {
      const part = asItem(p);
      return part && part.type === 'output_text' && !('annotations' in part)
        ? { ...part, annotations: [] }
        : p;
    }),
  };
}

/** Converts canonical messages to Responses input items. */
export function toResponsesInput(messages: readonly Message[]): Json[] {
  const out: Json[] = [];
  for (const m of messages) {
    // An assistant turn imported from Responses replays its own items: `id`, `status` and
    // `phase` stay (gpt-5.3-codex and later need `phase` resent), even after clearing.
    const imported = m.role === 'assistant' ? importedResponsesItems(m) : undefined;
    if (imported) {
      out.push(...imported.map(withAnnotations));
      continue;
    }
    for (const item of itemsOf(m)) if (isResponsesOpaque(item)) out.push(item);
    const stored = storedItem(m);
    if (stored) {
      out.push(stored);
      continue;
    }
    const text = textOf(m.content);
    switch (m.role) {
      case 'system':
        out.push({ type: 'message', role: 'developer', content: contentParts(m, 'input_text') });
        break;
      case 'user':
        out.push({ type: 'message', role: 'user', content: contentParts(m, 'input_text') });
        break;
      case 'assistant':
        if (text.length > 0) out.push({ role: 'assistant', content: text });
        for (const c of m.toolCalls ?? []) {
          out.push(
            c.freeformInput !== undefined
              ? { type: 'custom_tool_call', call_id: c.id, name: c.name, input: c.freeformInput }
              : { type: 'function_call', call_id: c.id, name: c.name, arguments: c.arguments },
          );
        }
        break;
      case 'tool':
        out.push({ type: 'function_call_output', call_id: m.toolCallId ?? '', output: text });
        break;
    }
  }
  return out;
}

const OutputItemSchema = z.looseObject({ type: z.string().optional() });

/**
 * Converts returned output items to canonical messages: messages keep
 * their raw item for verbatim replay; function calls/outputs become tool protocol
 * messages; compaction and every other item become opaque assistant messages.
 */
export function fromResponsesOutput(items: readonly Json[]): Message[] {
  const out: Message[] = [];
  for (const raw of items) {
    const item = asItem(raw);
    if (!item || !OutputItemSchema.safeParse(item).success) continue;
    const role = item.role;
    if (
      (item.type === 'message' || item.type === undefined) &&
      (role === 'user' || role === 'assistant' || role === 'system' || role === 'developer')
    ) {
      out.push({
        role: role === 'developer' ? 'system' : role,
        content: textOfResponsesItem(item),
        metadata: { [RESPONSES_ITEM_KEY]: item },
      });
    } else if (
      item.type === 'function_call' &&
      typeof item.call_id === 'string' &&
      typeof item.name === 'string'
    ) {
      out.push({
        role: 'assistant',
        content: '',
        toolCalls: [
          {
            id: item.call_id,
            name: item.name,
            arguments: typeof item.arguments === 'string' ? item.arguments : '',
          },
        ],
      });
    } else if (item.type === 'function_call_output' && typeof item.call_id === 'string') {
      const o = item.output;
      out.push({
        role: 'tool',
        toolCallId: item.call_id,
        content: typeof o === 'string' ? o : JSON.stringify(o ?? ''),
      });
    } else {
      out.push({ role: 'assistant', content: '', reasoningDetails: [item] });
    }
  }
  return out;
}
