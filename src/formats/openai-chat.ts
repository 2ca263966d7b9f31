import { z } from 'zod';
import {
  textOf,
  type ContentPart,
  type Content,
  type Json,
  type Message,
  type ToolCall,
} from '../messages/message.js';
import { UserError } from '../core/errors.js';
import { validate, placeOf, inputError } from './input-error.js';
import {
  isJsonArrayText,
  JsonDocument,
  parseJson,
  parseJsonLines,
  tryParseJson,
  type SessionText,
} from './json-text.js';
import { attachRoundTrip, exportGroups, type ImportedGroup } from './round-trip.js';
import type { Patch } from './residual.js';
import { envelopeOf, providerMetaFor, writeDocument, type DocumentShape } from './provider-envelope.js';
import { isObj as isJsonObject, messagesDocumentFormat } from './detect.js';
import type { ImportResult, SessionFormat } from './types.js';

/** OpenAI Chat Completions messages. Unknown keys pass through to the residual. */
const PartSchema = z.looseObject({ type: z.string() });
const TextPartSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }).optional(),
  custom: z.looseObject({ name: z.string(), input: z.string() }).optional(),
});
const ChatMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.null(), z.array(PartSchema)]).optional(),
  tool_calls: z.array(ToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
});
type ChatMessage = z.infer<typeof ChatMessageSchema>;

/**
 * Gemini's OpenAI-compatible endpoint signs each call in `extra_content.google.thought_signature`.
 * It becomes the call's `thoughtSignature`, so clearing the call's result can drop it and the
 * exporter writes it back only for calls that still have it.
 */
function thoughtSignatureOf(call: Record<string, unknown>): string | undefined {
  const extra = call.extra_content;
  if (typeof extra !== 'object' || extra === null) return undefined;
  const google = (extra as Record<string, unknown>).google;
  if (typeof google !== 'object' || google === null) return undefined;
  const signature = (google as Record<string, unknown>).thought_signature;
  return typeof signature === 'string' ? signature : undefined;
}

/** The Chat Completions form of a call's signature, written where Gemini reads it. */
function signatureToChat(c: ToolCall): Record<string, Json> {
  return c.thoughtSignature === undefined
    ? {}
    : { extra_content: { google: { thought_signature: c.thoughtSignature } } };
}

function partFromChat(p: Record<string, unknown>, where: string, path: string): ContentPart | undefined {
  if (p.type === 'text') return { type: 'text', text: validate(TextPartSchema, p, where, path).text };
  if (p.type === 'image_url' && typeof p.image_url === 'object' && p.image_url !== null) {
    const img = p.image_url as { url?: unknown; detail?: unknown };
    if (typeof img.url !== 'string') throw inputError(where, `${path}.image_url.url: expected string`);
    return { type: 'image', url: img.url, ...(typeof img.detail === 'string' ? { detail: img.detail } : {}) };
  }
  if (p.type === 'file' && typeof p.file === 'object' && p.file !== null) {
    const f = p.file as Record<string, unknown>;
    return {
      type: 'file',
      ...(typeof f.file_id === 'string' ? { fileId: f.file_id } : {}),
      ...(typeof f.file_data === 'string' ? { data: f.file_data } : {}),
      ...(typeof f.filename === 'string' ? { filename: f.filename } : {}),
    };
  }
  return undefined; // audio, refusal …: kept by the residual, not modelled
}

function contentFromChat(c: ChatMessage['content'], where: string, path: string): Content {
  if (c === undefined || c === null) return '';
  if (typeof c === 'string') return c;
  const parts: ContentPart[] = [];
  c.forEach((p, i) => {
    const part = partFromChat(p, where, `${path}.content[${i}]`);
    if (part) parts.push(part);
  });
  return parts;
}

/** Converts one validated Chat Completions message to the canonical model. */
export function messageFromChat(m: ChatMessage, where: string, path: string): Message {
  const content = contentFromChat(m.content, where, path);
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content };
    case 'user':
      return { role: 'user', content };
    case 'tool':
      if (m.tool_call_id === undefined)
        throw inputError(where, `${path}.tool_call_id: required on tool messages`);
      return { role: 'tool', content, toolCallId: m.tool_call_id };
    case 'assistant': {
      const calls: ToolCall[] = (m.tool_calls ?? []).map((c, i) => {
        const signature = thoughtSignatureOf(c);
        const signed = signature === undefined ? {} : { thoughtSignature: signature };
        if (c.function)
          return { id: c.id, name: c.function.name, arguments: c.function.arguments, ...signed };
        if (c.custom)
          return { id: c.id, name: c.custom.name, arguments: '', freeformInput: c.custom.input, ...signed };
        throw inputError(where, `${path}.tool_calls[${i}].function: required`);
      });
      return calls.length > 0
        ? { role: 'assistant', content, toolCalls: calls }
        : { role: 'assistant', content };
    }
  }
}

function partToChat(p: ContentPart): Json {
  if (p.type === 'text') return { type: 'text', text: p.text };
  if (p.type === 'image') {
    const url = p.url ?? `data:${p.mimeType ?? 'image/png'};base64,${p.data ?? ''}`;
    return { type: 'image_url', image_url: p.detail ? { url, detail: p.detail } : { url } };
  }
  const file: Record<string, Json> = {};
  if (p.fileId !== undefined) file.file_id = p.fileId;
  if (p.data !== undefined) file.file_data = p.data;
  if (p.filename !== undefined) file.filename = p.filename;
  return { type: 'file', file };
}

function contentToChat(c: Content): Json {
  return typeof c === 'string' ? c : c.map(partToChat);
}

/** The plain Chat Completions message for a canonical message (no residual). */
export function messageToChat(m: Message): Json {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: contentToChat(m.content) };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: contentToChat(m.content) };
    case 'assistant': {
      const calls = m.toolCalls ?? [];
      const empty = typeof m.content === 'string' ? m.content === '' : m.content.length === 0;
      const out: Record<string, Json> = {
        role: 'assistant',
        content: empty && calls.length > 0 ? null : contentToChat(m.content),
      };
      if (calls.length > 0)
        out.tool_calls = calls.map((c): Json =>
          c.freeformInput !== undefined
            ? {
                id: c.id,
                type: 'custom',
                custom: { name: c.name, input: c.freeformInput },
                ...signatureToChat(c),
              }
            : {
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: c.arguments },
                ...signatureToChat(c),
              },
        );
      return out;
    }
  }
}

const buildGroup = (ms: readonly Message[]): Json[] => ms.map(messageToChat);

/** The raw entries of a chat document, and how errors name each one. */
interface ChatEntries {
  shape: DocumentShape;
  envelope?: Record<string, Json>;
  values: unknown[];
  /** The values are the entries of a document read in pieces, used for nothing after the import. */
  owned: boolean;
  where: (i: number) => string;
  path: (i: number) => string;
}

function chatEntries(text: SessionText, fileName?: string): ChatEntries {
  const where = placeOf(fileName);
  if (isJsonArrayText(text)) {
    const values = parseJson(text, fileName) as unknown[];
    return {
      shape: 'array',
      values,
      owned: text instanceof JsonDocument,
      where: () => where,
      path: (i) => `[${i}]`,
    };
  }
  const doc = tryParseJson(text);
  if (doc && typeof doc === 'object' && Array.isArray((doc as { messages?: unknown }).messages)) {
    return {
      shape: 'object',
      envelope: envelopeOf(doc as Record<string, unknown>, 'messages'),
      values: (doc as { messages: unknown[] }).messages,
      owned: text instanceof JsonDocument,
      where: () => where,
      path: (i) => `messages[${i}]`,
    };
  }
  if (typeof text === 'string' && text.trim() === '') throw inputError(where, 'empty input');
  const lines = parseJsonLines(text, fileName);
  return {
    shape: 'jsonl',
    values: lines.map((l) => l.value),
    owned: false,
    where: (i) => placeOf(fileName, `line ${lines[i].line}`),
    path: () => '',
  };
}

/**
 * One group per entry, made when round-trip marking asks for it: no list of all groups (or of
 * wrapped entries) is held beside the messages, which for 100,000 messages was 35 MB.
 */
function* chatGroups(e: ChatEntries): Generator<ImportedGroup> {
  for (let i = 0; i < e.values.length; i++) {
    const value = e.values[i];
    const where = e.where(i);
    const path = e.path(i);
    const m = validate(ChatMessageSchema, value, where, path);
    yield { raw: [value as Json], messages: [messageFromChat(m, where, path || 'message')] };
    // Each entry goes once converted, so a full GC during the import can free it: holding all
    // 100,000 raw entries to the end put a 100,000-message run's peak about 15 MB higher.
    if (e.owned) e.values[i] = undefined;
  }
}

/** Imports a Chat Completions document: a JSON array, `{messages:[…]}` or JSONL (one message a line). */
export function importOpenAIChat(text: SessionText, fileName?: string): ImportResult {
  const entries = chatEntries(text, fileName);
  const messages = attachRoundTrip('openai-chat', chatGroups(entries), buildGroup);
  const { shape, envelope } = entries;
  return {
    format: 'openai-chat',
    file: fileName,
    sessions: [{ id: 'main', messages, meta: { provider: { format: 'openai-chat', shape, envelope } } }],
  };
}

type Obj = Record<string, Json>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A changed message (e.g. a cleared call's arguments) keeps its tool calls' unknown keys from
 * the residual. The thought signature is not among them: it lives on the canonical call, so a
 * call whose result was cleared goes out without it and a kept call with it.
 */
function restoreCallExtras(built: Json[], patch: Patch): Json[] {
  if ('replace' in patch) return built;
  return built.map((item, i) => {
    const p = patch.items?.[String(i)];
    const calls = p && !('replace' in p) ? p.sub?.tool_calls : undefined;
    if (!calls || 'replace' in calls || !isObj(item) || !Array.isArray(item.tool_calls)) return item;
    const toolCalls = item.tool_calls.map((call, j) => {
      const cp = calls.items?.[String(j)];
      if (!cp || 'replace' in cp || !cp.set || !isObj(call)) return call;
      const extras = Object.fromEntries(Object.entries(cp.set).filter(([k]) => !(k in call)));
      return { ...call, ...extras };
    });
    return { ...item, tool_calls: toolCalls };
  });
}

/** A `reasoningDetails` entry as an object (entries may be JSON strings). */
function detailObject(d: Json): Obj | undefined {
  if (typeof d !== 'string') return isObj(d) ? d : undefined;
  try {
    const v = JSON.parse(d) as unknown;
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Chat Completions has no place for a provider compaction item: a message that holds one is
 * exported as its summary text, and one without text (an encrypted OpenAI item) cannot be
 * written at all — an empty assistant message would silently lose the compacted history.
 * Throws a one-line UserError naming the formats that carry the item.
 */
export function assertChatCarriesCompaction(messages: readonly Message[]): void {
  messages.forEach((m, i) => {
    if (textOf(m.content).trim() !== '') return;
    for (const d of m.reasoningDetails ?? []) {
      const item = detailObject(d);
      if (typeof item?.type !== 'string' || !item.type.startsWith('compaction')) continue;
      const native = 'content' in item ? 'anthropic' : 'openai-responses';
      throw new UserError(
        `openai-chat cannot carry the provider compaction item of message ${i + 1} (it has no summary text); write ${native} or canonical instead`,
      );
    }
  });
}

/** Canonical messages as the items of a Chat Completions `messages` list. */
export function exportOpenAIChatItems(messages: readonly Message[]): Json[] {
  assertChatCarriesCompaction(messages);
  return exportGroups('openai-chat', messages, buildGroup, () => 1, restoreCallExtras);
}

/** Exports canonical messages as Chat Completions messages. */
export function exportOpenAIChat(messages: readonly Message[], meta?: Record<string, unknown>): string {
  const items = exportOpenAIChatItems(messages);
  const p = providerMetaFor(meta, 'openai-chat');
  return writeDocument(items, 'messages', p?.shape ?? 'object', p?.envelope);
}

/** Chat Completions: `{role, content}` messages (a list or a request) without Anthropic's marks. */
export const openaiChatFormat: SessionFormat<'openai-chat'> = {
  name: 'openai-chat',
  detect: [
    { kind: 'document', order: 60, test: (doc) => messagesDocumentFormat(doc) === 'openai-chat' },
    { kind: 'line', order: 50, test: (v) => isJsonObject(v) && typeof v.role === 'string' && !('type' in v) },
  ],
  import: importOpenAIChat,
  importDocument: importOpenAIChat,
};
