import type { AgentInputItem } from '@openai/agents';
import type { ContentPart, Json, Message, ToolCall } from '../../messages/message.js';
import { decodeJson, encodeJson, sameJson } from '../shared/json-value.js';

/**
 * Agents SDK input items (Responses items) ⇄ canonical messages, lossless. A user or system
 * message item is one message; a `function_call_result` is one tool message; every run of
 * items in between (reasoning, assistant messages, function calls, other tool items) is one
 * assistant message, so a reasoning item moves, stays or goes with the items that follow it.
 * Each canonical message keeps its original items under `metadata.openaiAgents`; what
 * projection changed (cleared results, dropped calls, a summary's text) is rebuilt from the
 * canonical fields, everything else comes back verbatim.
 */

type Item = { type?: string; role?: string; [key: string]: unknown };

interface AgentsMeta {
  /** The original items of this message, in order (JSON-encoded). */
  items: Json[];
}

const KEY = 'openaiAgents';

const isUserOrSystem = (i: Item) => (i.role === 'user' || i.role === 'system') && i.type !== 'function_call';
const isResult = (i: Item) => i.type === 'function_call_result';
const isAssistantText = (i: Item) => i.role === 'assistant' && (i.type === undefined || i.type === 'message');

/** A media part as a canonical reference (counted as one media item; the bytes stay in the item). */
function mediaPart(kind: 'image' | 'file', ref: unknown): ContentPart {
  const url =
    typeof ref === 'string'
      ? ref
      : typeof (ref as { url?: unknown })?.url === 'string'
        ? (ref as { url: string }).url
        : undefined;
  const part: ContentPart = kind === 'image' ? { type: 'image' } : { type: 'file' };
  if (url !== undefined && /^(https?:|data:)/.test(url)) part.url = url;
  return part;
}

/** Canonical content of item content: text parts as text, images and files as references, the rest left out. */
export function contentOf(content: unknown): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: ContentPart[] = [];
  for (const p of content as Item[]) {
    if (p?.type === 'input_text' || p?.type === 'output_text' || p?.type === 'text')
      out.push({ type: 'text', text: typeof p.text === 'string' ? p.text : '' });
    else if (p?.type === 'refusal')
      out.push({ type: 'text', text: typeof p.refusal === 'string' ? p.refusal : '' });
    else if (p?.type === 'input_image' || p?.type === 'image') out.push(mediaPart('image', p.image));
    else if (p?.type === 'input_file' || p?.type === 'file') out.push(mediaPart('file', p.file));
  }
  return out;
}

/** A tool result's output as canonical content (a single part is a one-element list). */
function outputOf(output: unknown): string | ContentPart[] {
  if (typeof output === 'string') return output;
  return contentOf(Array.isArray(output) ? output : [output]);
}

function flatText(content: string | ContentPart[]): string {
  return typeof content === 'string'
    ? content
    : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function withItems(m: Message, items: Item[]): Message {
  m.metadata = { [KEY]: { items: items.map((i) => encodeJson(i)) } };
  return m;
}

function assistantOf(items: Item[]): Message {
  const content: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const reasoning: string[] = [];
  for (const i of items) {
    if (isAssistantText(i)) {
      const c = contentOf(i.content);
      content.push(...(typeof c === 'string' ? [{ type: 'text' as const, text: c }] : c));
    } else if (i.type === 'function_call')
      toolCalls.push({
        id: String(i.callId ?? ''),
        name: String(i.name ?? ''),
        arguments: String(i.arguments ?? ''),
      });
    else if (i.type === 'reasoning') {
      const text = flatText(contentOf(i.content));
      if (text !== '') reasoning.push(text);
    }
  }
  const m: Message = { role: 'assistant', content };
  if (toolCalls.length > 0) m.toolCalls = toolCalls;
  if (reasoning.length > 0) m.reasoning = reasoning.join('\n');
  return withItems(m, items);
}

/** Agents SDK input items → canonical messages (lossless; see {@link toAgentInputItems}). Never mutates the input. */
export function fromAgentInputItems(items: readonly AgentInputItem[]): Message[] {
  const out: Message[] = [];
  let run: Item[] = [];
  const flush = () => {
    if (run.length > 0) out.push(assistantOf(run));
    run = [];
  };
  for (const raw of items as readonly Item[]) {
    if (isUserOrSystem(raw)) {
      flush();
      out.push(withItems({ role: raw.role as 'user' | 'system', content: contentOf(raw.content) }, [raw]));
    } else if (isResult(raw)) {
      flush();
      const m: Message = {
        role: 'tool',
        content: outputOf(raw.output),
        toolCallId: String(raw.callId ?? ''),
        toolName: String(raw.name ?? ''),
      };
      out.push(withItems(m, [raw]));
    } else run.push(raw);
  }
  flush();
  return out;
}

function itemsOf(m: Message): Item[] | undefined {
  const meta = m.metadata?.[KEY] as unknown as AgentsMeta | undefined;
  return Array.isArray(meta?.items) ? (meta.items.map((i) => decodeJson(i)) as Item[]) : undefined;
}

/** Output text parts as the Agents SDK wants them in an assistant message. */
function outputText(content: string | ContentPart[]): Item[] {
  const text = flatText(content);
  return text === '' ? [] : [{ type: 'output_text', text }];
}

function userContent(content: string | ContentPart[]): unknown {
  if (typeof content === 'string') return content;
  return content.map((p) =>
    p.type === 'text'
      ? { type: 'input_text', text: p.text }
      : p.type === 'image'
        ? { type: 'input_image', image: p.url ?? '' }
        : { type: 'input_file', file: { url: p.url ?? '' } },
  );
}

function userOrSystemBack(m: Message, original: Item | undefined): Item {
  if (original !== undefined && sameJson(contentOf(original.content), m.content)) return original;
  const role = m.role as 'user' | 'system';
  const content = role === 'system' ? flatText(m.content) : userContent(m.content);
  const { content: _drop, ...rest } = original ?? {};
  return { ...rest, role, content };
}

function toolBack(m: Message, original: Item | undefined): Item {
  if (original !== undefined && sameJson(outputOf(original.output), m.content)) return original;
  return {
    type: 'function_call_result',
    name: m.toolName ?? '',
    status: 'completed',
    ...(original ?? {}),
    callId: m.toolCallId ?? '',
    output: flatText(m.content),
  };
}

/** An assistant message's items: the originals, minus dropped calls, with changed text or calls rebuilt. */
function assistantBack(m: Message, original: Item[]): Item[] {
  const calls = new Map<string, ToolCall[]>();
  for (const c of m.toolCalls ?? []) calls.set(c.id, [...(calls.get(c.id) ?? []), c]);
  const textChanged = !sameJson(assistantOf(original).content, m.content);
  // One entry per original item: what it becomes (undefined: dropped).
  const kept: Array<Item | undefined> = original.map((item) => {
    if (isAssistantText(item)) return textChanged ? undefined : item;
    if (item.type !== 'function_call') return item;
    const c = calls.get(String(item.callId ?? ''))?.shift();
    if (c === undefined) return undefined; // dropped by pairing repair or compaction
    return c.name === item.name && c.arguments === item.arguments
      ? item
      : { ...item, name: c.name, arguments: c.arguments };
  });
  // Changed text takes the first assistant message's place, else goes before the first call.
  const text = outputText(m.content);
  const newText: Item = { type: 'message', role: 'assistant', status: 'completed', content: text };
  const firstText = original.findIndex(isAssistantText);
  let insertAt = -1;
  if (textChanged && text.length > 0) {
    if (firstText >= 0) kept[firstText] = newText;
    else {
      insertAt = original.findIndex((i) => i.type === 'function_call');
      if (insertAt < 0) insertAt = original.length;
    }
  }
  dropOrphanReasoning(original, kept);
  const out: Item[] = [];
  kept.forEach((item, i) => {
    if (i === insertAt) out.push(newText);
    if (item !== undefined) out.push(item);
  });
  if (insertAt === original.length) out.push(newText);
  for (const rest of calls.values())
    for (const c of rest)
      out.push({
        type: 'function_call',
        callId: c.id,
        name: c.name,
        arguments: c.arguments,
        status: 'completed',
      });
  return out;
}

/**
 * The Responses API rejects a reasoning item without the item that followed it; when that
 * item was dropped, the reasoning goes too (a reasoning item that ended the run stays as it was).
 */
function dropOrphanReasoning(original: Item[], kept: Array<Item | undefined>): void {
  for (let i = original.length - 2; i >= 0; i--)
    if (original[i].type === 'reasoning' && kept[i + 1] === undefined) kept[i] = undefined;
}

/** Canonical messages → Agents SDK input items; `toAgentInputItems(fromAgentInputItems(x))` equals `x`. */
export function toAgentInputItems(history: readonly Message[]): AgentInputItem[] {
  const out: Item[] = [];
  for (const m of history) {
    const original = itemsOf(m);
    if (m.role === 'user' || m.role === 'system') out.push(userOrSystemBack(m, original?.[0]));
    else if (m.role === 'tool') out.push(toolBack(m, original?.[0]));
    else out.push(...assistantBack(m, original ?? []));
  }
  return out as AgentInputItem[];
}
