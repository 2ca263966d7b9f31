import { z } from 'zod';
import type { Content, ContentPart, Json, Message, ToolCall } from '../messages/message.js';
import { inputError, placeOf, validate } from './input-error.js';
import { isJsonArrayText, parseJson, parseJsonLines, tryParseJson, type SessionText } from './json-text.js';
import { envelopeOf, providerMetaFor, writeDocument, type DocumentShape } from './provider-envelope.js';
import { attachRoundTrip, exportGroups, type ImportedGroup } from './round-trip.js';
import { isObj, isResponsesItem } from './detect.js';
import type { ImportResult, SessionFormat } from './types.js';

/** OpenAI Responses input items. Opaque items (reasoning, compaction …) ride in reasoningDetails. */
const ItemSchema = z.looseObject({ type: z.string().optional(), role: z.string().optional() });
const PartSchema = z.looseObject({ type: z.string() });
const MessageItemSchema = z.looseObject({
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(PartSchema)]),
});
const FunctionCallSchema = z.looseObject({ call_id: z.string(), name: z.string(), arguments: z.string() });
const CustomCallSchema = z.looseObject({ call_id: z.string(), name: z.string(), input: z.string() });
const OutputSchema = z.looseObject({
  call_id: z.string(),
  output: z.union([z.string(), z.array(PartSchema)]),
});

type Item = Record<string, unknown>;

function partFromResponses(p: Item, where: string, path: string): ContentPart | undefined {
  if (p.type === 'input_text' || p.type === 'output_text') {
    if (typeof p.text !== 'string') throw inputError(where, `${path}.text: expected string`);
    return { type: 'text', text: p.text };
  }
  if (p.type === 'input_image') {
    const img: ContentPart = { type: 'image' };
    if (typeof p.image_url === 'string') img.url = p.image_url;
    if (typeof p.detail === 'string') img.detail = p.detail;
    return img;
  }
  if (p.type === 'input_file') {
    const f: ContentPart = { type: 'file' };
    if (typeof p.file_id === 'string') f.fileId = p.file_id;
    if (typeof p.file_data === 'string') f.data = p.file_data;
    if (typeof p.file_url === 'string') f.url = p.file_url;
    if (typeof p.filename === 'string') f.filename = p.filename;
    return f;
  }
  return undefined; // refusal and newer part types: residual only
}

/** Canonical content from Responses content (a string or typed parts). */
export function contentFromResponses(c: string | Item[], where: string, path: string): Content {
  if (typeof c === 'string') return c;
  const out: ContentPart[] = [];
  c.forEach((p, i) => {
    const part = partFromResponses(p, where, `${path}[${i}]`);
    if (part) out.push(part);
  });
  return out;
}

function partToResponses(p: ContentPart, assistant: boolean): Json {
  if (p.type === 'text') return { type: assistant ? 'output_text' : 'input_text', text: p.text };
  if (p.type === 'image') {
    const out: Record<string, Json> = { type: 'input_image' };
    const url =
      p.url ?? (p.data !== undefined ? `data:${p.mimeType ?? 'image/png'};base64,${p.data}` : undefined);
    if (url !== undefined) out.image_url = url;
    out.detail = p.detail ?? 'auto';
    return out;
  }
  const out: Record<string, Json> = { type: 'input_file' };
  if (p.fileId !== undefined) out.file_id = p.fileId;
  if (p.data !== undefined) out.file_data = p.data;
  if (p.url !== undefined) out.file_url = p.url;
  if (p.filename !== undefined) out.filename = p.filename;
  return out;
}

function contentToResponses(c: Content, assistant: boolean): Json {
  if (typeof c === 'string') return assistant ? [{ type: 'output_text', text: c }] : c;
  return c.map((p) => partToResponses(p, assistant));
}

function isEmpty(c: Content): boolean {
  return typeof c === 'string' ? c === '' : c.length === 0;
}

/** Builds Responses items from canonical messages; `customCalls` names call ids of freeform tools. */
function buildItems(ms: readonly Message[], customCalls: ReadonlySet<string>): Json[] {
  const out: Json[] = [];
  for (const m of ms) {
    if (m.role === 'assistant') {
      out.push(...(m.reasoningDetails ?? []));
      if (!isEmpty(m.content) || (!m.toolCalls?.length && !m.reasoningDetails?.length))
        out.push({ type: 'message', role: 'assistant', content: contentToResponses(m.content, true) });
      for (const c of m.toolCalls ?? [])
        out.push(
          c.freeformInput !== undefined
            ? { type: 'custom_tool_call', call_id: c.id, name: c.name, input: c.freeformInput }
            : { type: 'function_call', call_id: c.id, name: c.name, arguments: c.arguments },
        );
    } else if (m.role === 'tool') {
      const id = m.toolCallId ?? '';
      const output = typeof m.content === 'string' ? m.content : contentToResponses(m.content, false);
      out.push({
        type: customCalls.has(id) ? 'custom_tool_call_output' : 'function_call_output',
        call_id: id,
        output,
      });
    } else out.push({ type: 'message', role: m.role, content: contentToResponses(m.content, false) });
  }
  return out;
}

function customCallIds(ms: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const m of ms) for (const c of m.toolCalls ?? []) if (c.freeformInput !== undefined) ids.add(c.id);
  return ids;
}

interface Entry {
  value: unknown;
  where: string;
  path: string;
}

/** A function or custom (freeform) tool call item as a canonical tool call. */
function callFromItem(type: 'function_call' | 'custom_tool_call', item: unknown, e: Entry): ToolCall {
  if (type === 'function_call') {
    const c = validate(FunctionCallSchema, item, e.where, e.path);
    return { id: c.call_id, name: c.name, arguments: c.arguments };
  }
  const c = validate(CustomCallSchema, item, e.where, e.path);
  return { id: c.call_id, name: c.name, arguments: '', freeformInput: c.input };
}

/** The text of a reasoning item's summary; entries may be anything, so only object entries with text count. */
function reasoningSummaryText(summary: unknown): string {
  if (!Array.isArray(summary)) return '';
  return (summary as unknown[])
    .flatMap((s) => {
      const t = s !== null && typeof s === 'object' ? (s as Item).text : undefined;
      return typeof t === 'string' ? [t] : [];
    })
    .join('\n');
}

/**
 * Groups items into canonical messages: an assistant turn gathers opaque items, at most
 * one assistant message and the calls after it; every other item is its own message.
 */
// Raw items are the parsed values themselves (not the zod copies): their raw number texts are known.
export function itemsToGroups(entries: readonly Entry[]): ImportedGroup[] {
  const groups: ImportedGroup[] = [];
  let turn: { raw: Json[]; m: Message; hasMessage: boolean } | undefined;
  const flush = () => {
    if (turn) groups.push({ raw: turn.raw, messages: [turn.m] });
    turn = undefined;
  };
  const openTurn = () => (turn ??= { raw: [], m: { role: 'assistant', content: '' }, hasMessage: false });
  for (const e of entries) {
    const item = validate(ItemSchema, e.value, e.where, e.path);
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === undefined) throw inputError(e.where, `${e.path || 'item'}.type: required`);
    if (type === 'message') {
      const mi = validate(MessageItemSchema, item, e.where, e.path);
      const content = contentFromResponses(mi.content as string | Item[], e.where, `${e.path}.content`);
      if (mi.role === 'assistant') {
        if (turn && (turn.hasMessage || turn.m.toolCalls)) flush();
        const t = openTurn();
        t.raw.push(e.value as Json);
        t.m.content = content;
        t.hasMessage = true;
        continue;
      }
      flush();
      groups.push({
        raw: [e.value as Json],
        messages: [{ role: mi.role === 'developer' ? 'system' : mi.role, content }],
      });
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const t = openTurn();
      t.raw.push(e.value as Json);
      (t.m.toolCalls ??= []).push(callFromItem(type, item, e));
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      flush();
      const o = validate(OutputSchema, item, e.where, e.path);
      const content =
        typeof o.output === 'string'
          ? o.output
          : contentFromResponses(o.output as Item[], e.where, `${e.path}.output`);
      groups.push({ raw: [e.value as Json], messages: [{ role: 'tool', content, toolCallId: o.call_id }] });
    } else {
      // reasoning, compaction, web_search_call, item_reference …: opaque, verbatim.
      if (turn && (turn.hasMessage || turn.m.toolCalls)) flush();
      const t = openTurn();
      t.raw.push(e.value as Json);
      (t.m.reasoningDetails ??= []).push(e.value as Json);
      const text = type === 'reasoning' ? reasoningSummaryText(item.summary) : '';
      if (text !== '') t.m.reasoning = t.m.reasoning ? `${t.m.reasoning}\n${text}` : text;
    }
  }
  flush();
  return groups;
}

/** A builder bound to the call ids of freeform tools in the whole export. */
export function responsesBuilder(all: readonly Message[]): (ms: readonly Message[]) => Json[] {
  const custom = customCallIds(all);
  return (ms) => buildItems(ms, custom);
}

/**
 * The Responses items an imported message came from: exactly the original items while the
 * message is unchanged, else rebuilt from the message with the original's unknown top-level
 * keys (`id`, `status`, `phase` …) restored. Undefined for messages not imported from Responses.
 */
export function importedResponsesItems(m: Message): Json[] | undefined {
  const rt = m.metadata?.roundTrip as { format?: unknown } | undefined;
  if (!rt || typeof rt !== 'object' || rt.format !== 'openai-responses') return undefined;
  return exportGroups('openai-responses', [m], responsesBuilder([m]), () => 1);
}

/** Imports Responses input items: a JSON array, `{input:[…]}` or JSONL (one item a line). */
export function importOpenAIResponses(text: SessionText, fileName?: string): ImportResult {
  const where = placeOf(fileName);
  let shape: DocumentShape;
  let envelope: Record<string, Json> | undefined;
  let entries: Entry[];
  const doc = isJsonArrayText(text) ? parseJson(text, fileName) : tryParseJson(text);
  if (Array.isArray(doc)) {
    shape = 'array';
    entries = doc.map((value, i) => ({ value, where, path: `[${i}]` }));
  } else if (doc && typeof doc === 'object' && Array.isArray((doc as { input?: unknown }).input)) {
    shape = 'object';
    envelope = envelopeOf(doc as Record<string, unknown>, 'input');
    entries = (doc as { input: unknown[] }).input.map((value, i) => ({ value, where, path: `input[${i}]` }));
  } else {
    if (doc && typeof doc === 'object' && 'input' in doc)
      throw inputError(where, 'input: expected an array of items');
    shape = 'jsonl';
    entries = parseJsonLines(text, fileName).map((l) => ({
      value: l.value,
      where: placeOf(fileName, `line ${l.line}`),
      path: '',
    }));
  }
  const groups = itemsToGroups(entries);
  const all = groups.flatMap((g) => g.messages);
  const messages = attachRoundTrip('openai-responses', groups, responsesBuilder(all));
  return {
    format: 'openai-responses',
    file: fileName,
    sessions: [{ id: 'main', messages, meta: { provider: { format: 'openai-responses', shape, envelope } } }],
  };
}

/**
 * Whether the item `next` starts a group of its own after the group that gave `last`, as
 * {@link itemsToGroups} groups them: an assistant turn takes in calls, and an assistant message or
 * an opaque item while it holds neither a message nor calls (told here only by its text).
 */
function startsGroupAfter(last: Message, next: unknown): boolean {
  if (last.role !== 'assistant') return true;
  if (!isObj(next)) return false;
  const type = next.type ?? (next.role !== undefined ? 'message' : undefined);
  if (type === 'function_call_output' || type === 'custom_tool_call_output') return true;
  if (type === 'message') {
    if (next.role !== 'assistant') return true;
  } else if (type === undefined || type === 'function_call' || type === 'custom_tool_call') return false;
  return last.toolCalls !== undefined || !isEmpty(last.content);
}

/**
 * The messages of Responses items that follow `before` (the messages of the items before them in
 * one list) as importing the whole list gives them, their groups counted from these items'
 * start; undefined when that import would put the first of them into the group before.
 */
export function importResponsesTail(
  values: readonly unknown[],
  before: readonly Message[],
  where: string,
): Message[] | undefined {
  const last = before[before.length - 1];
  if (last !== undefined && values.length > 0 && !startsGroupAfter(last, values[0])) return undefined;
  const groups = itemsToGroups(values.map((value, i) => ({ value, where, path: `input[${i}]` })));
  // A result is typed after its call, which may be before these items.
  const all = [...before, ...groups.flatMap((g) => g.messages)];
  return attachRoundTrip('openai-responses', groups, responsesBuilder(all));
}

/**
 * The writer of Responses input items for runs of the messages `all`: a call's output is typed
 * after its call (a freeform tool's or a function's), which may be in another run.
 */
export function responsesItemsWriter(all: readonly Message[]): (messages: readonly Message[]) => Json[] {
  const build = responsesBuilder(all);
  return (messages) => exportGroups('openai-responses', messages, build, () => 1);
}

/** Exports canonical messages as Responses input items. */
export function exportOpenAIResponses(messages: readonly Message[], meta?: Record<string, unknown>): string {
  const items = responsesItemsWriter(messages)(messages);
  const p = providerMetaFor(meta, 'openai-responses');
  return writeDocument(items, 'input', p?.shape ?? 'object', p?.envelope);
}

/**
 * A Responses line: an item, or a message with a role. A bare `message` event with neither a
 * role, a payload nor a call id is a cut-short Gemini CLI event, not a Responses item.
 */
function isResponsesLine(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.type === 'message') return 'role' in v || 'payload' in v || 'call_id' in v;
  return isResponsesItem(v);
}

/** OpenAI Responses: a list with items, a request with `input`, or item lines. */
export const openaiResponsesFormat: SessionFormat<'openai-responses'> = {
  name: 'openai-responses',
  detect: [
    { kind: 'document', order: 55, test: (doc) => Array.isArray(doc) && doc.some(isResponsesItem) },
    { kind: 'document', order: 70, test: (doc) => isObj(doc) && Array.isArray(doc.input) },
    { kind: 'line', order: 60, test: isResponsesLine },
  ],
  import: importOpenAIResponses,
  importDocument: importOpenAIResponses,
};
