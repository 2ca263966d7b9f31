import type { ModelMessage } from 'ai';
import type { ContentPart, Json, Message, ToolCall } from '../../messages/message.js';
import { argumentsToInput, decodeJson, encodeJson, inputToArguments } from '../shared/json-value.js';
import { mediaRef, outputContent, restoreOutput, urlOf } from './tool-output.js';

/**
 * ModelMessage ⇄ canonical messages, lossless. Text, tool calls and tool results become
 * canonical fields (what projection, clearing and compaction work on); images and files become
 * media references; everything else — reasoning, provider options and metadata, custom parts,
 * approvals — rides along verbatim under `metadata.aiSdk` / `reasoningDetails` and comes back
 * in its original place. The same code serves the middleware's provider-level prompt, whose
 * message shapes are the same except that its user content is always an array.
 */

type Part = { type: string; [key: string]: unknown };
type AnyMessage = { role: string; content: string | Part[]; providerOptions?: unknown };

/** Where each original part goes back: content slot, tool call (by id) or opaque item. */
type Slot = { k: 'c'; po?: Json; part?: Json } | { k: 't'; id: string; po?: Json; px?: boolean } | { k: 'r' };

interface AiSdkMeta {
  providerOptions?: Json;
  layout?: Slot[];
  /** Tool messages: the original output, part options, and parts around the result. */
  output?: Json;
  po?: Json;
  before?: Json[];
  after?: Json[];
  /** A later result of the same tool message. */
  continues?: boolean;
}

const KEY = 'aiSdk';
const OPAQUE = 'ai-sdk-part';

function withMeta(m: Message, meta: AiSdkMeta): Message {
  const clean = Object.fromEntries(Object.entries(meta).filter(([, v]) => v !== undefined)) as AiSdkMeta;
  if (Object.keys(clean).length > 0) m.metadata = { [KEY]: clean as unknown as Json };
  return m;
}

function metaOf(m: Message): AiSdkMeta {
  const meta = m.metadata?.[KEY];
  return meta !== null && typeof meta === 'object' && !Array.isArray(meta) ? (meta as AiSdkMeta) : {};
}

const po = (v: unknown): Json | undefined => (v === undefined ? undefined : encodeJson(v));

function fromContentMessage(m: AnyMessage): Message {
  const role = m.role as 'user' | 'assistant' | 'system';
  if (typeof m.content === 'string')
    return withMeta({ role, content: m.content }, { providerOptions: po(m.providerOptions) });
  const content: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const details: Json[] = [];
  const reasoning: string[] = [];
  const layout: Slot[] = [];
  for (const p of m.content) {
    if (p.type === 'text') {
      content.push({ type: 'text', text: String(p.text ?? '') });
      layout.push(p.providerOptions === undefined ? { k: 'c' } : { k: 'c', po: po(p.providerOptions) });
    } else if (p.type === 'image' || p.type === 'file') {
      content.push(mediaRef(p.mediaType, urlOf(p.type === 'image' ? p.image : p.data), p.filename));
      layout.push({ k: 'c', part: encodeJson(p) });
    } else if (p.type === 'tool-call') {
      const id = String(p.toolCallId ?? '');
      toolCalls.push({ id, name: String(p.toolName ?? ''), arguments: inputToArguments(p.input) });
      const slot: Slot = { k: 't', id };
      if (p.providerOptions !== undefined) slot.po = po(p.providerOptions);
      if (p.providerExecuted !== undefined) slot.px = p.providerExecuted === true;
      layout.push(slot);
    } else {
      if (p.type === 'reasoning' && typeof p.text === 'string') reasoning.push(p.text);
      details.push({ type: OPAQUE, part: encodeJson(p) });
      layout.push({ k: 'r' });
    }
  }
  const out: Message = { role, content };
  if (toolCalls.length > 0) out.toolCalls = toolCalls;
  if (reasoning.length > 0) out.reasoning = reasoning.join('\n');
  if (details.length > 0) out.reasoningDetails = details;
  return withMeta(out, { providerOptions: po(m.providerOptions), layout });
}

function fromToolMessage(m: AnyMessage, out: Message[]): void {
  const parts = typeof m.content === 'string' ? [] : m.content;
  let pending: Json[] = [];
  let first = true;
  for (const p of parts) {
    if (p.type !== 'tool-result') {
      pending.push(encodeJson(p));
      continue;
    }
    const msg: Message = {
      role: 'tool',
      content: outputContent(p.output),
      toolCallId: String(p.toolCallId ?? ''),
      toolName: String(p.toolName ?? ''),
    };
    out.push(
      withMeta(msg, {
        output: encodeJson(p.output),
        po: po(p.providerOptions),
        before: pending.length > 0 ? pending : undefined,
        providerOptions: first ? po(m.providerOptions) : undefined,
        continues: first ? undefined : true,
      }),
    );
    pending = [];
    first = false;
  }
  if (first) {
    // A tool message without results (approvals only) still round-trips.
    out.push(
      withMeta({ role: 'tool', content: '' }, { providerOptions: po(m.providerOptions), before: pending }),
    );
  } else if (pending.length > 0) {
    const last = out[out.length - 1];
    withMeta(last, { ...metaOf(last), after: pending });
  }
}

/** Framework messages (or prompt) → canonical messages. Never mutates the input. */
export function fromAiMessages(messages: readonly AnyMessage[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    if (m.role === 'tool') fromToolMessage(m, out);
    else out.push(fromContentMessage(m));
  }
  return out;
}

function genericPart(p: ContentPart): Part {
  if (p.type === 'text') return { type: 'text', text: p.text };
  const ref =
    p.url ??
    (p.data !== undefined ? `data:${p.mimeType ?? 'application/octet-stream'};base64,${p.data}` : '');
  return {
    type: 'file',
    data: { type: 'url', url: new URL(ref || 'about:blank') },
    mediaType: p.mimeType ?? 'application/octet-stream',
  };
}

function callPart(c: ToolCall, slot?: Extract<Slot, { k: 't' }>): Part {
  const part: Part = {
    type: 'tool-call',
    toolCallId: c.id,
    toolName: c.name,
    input: argumentsToInput(c.arguments),
  };
  if (slot?.po !== undefined) part.providerOptions = decodeJson(slot.po);
  if (slot?.px !== undefined) part.providerExecuted = slot.px;
  return part;
}

function toContentParts(m: Message, meta: AiSdkMeta): Part[] {
  const content =
    typeof m.content === 'string'
      ? m.content === ''
        ? []
        : [{ type: 'text' as const, text: m.content }]
      : m.content;
  // Calls by id, in order (ids may repeat in a malformed message; each slot takes the next).
  const calls = new Map<string, ToolCall[]>();
  for (const c of m.toolCalls ?? []) calls.set(c.id, [...(calls.get(c.id) ?? []), c]);
  const opaque = (m.reasoningDetails ?? []).filter(
    (d): d is { type: string; part: Json } =>
      typeof d === 'object' && d !== null && !Array.isArray(d) && d.type === OPAQUE,
  );
  const parts: Part[] = [];
  let ci = 0;
  let ri = 0;
  for (const slot of meta.layout ?? []) {
    if (slot.k === 'c') {
      const p = content[ci++];
      if (p === undefined) continue;
      if (p.type === 'text')
        parts.push(
          slot.po === undefined
            ? { type: 'text', text: p.text }
            : { type: 'text', text: p.text, providerOptions: decodeJson(slot.po) },
        );
      else parts.push(slot.part !== undefined ? (decodeJson(slot.part) as Part) : genericPart(p));
    } else if (slot.k === 't') {
      const c = calls.get(slot.id)?.shift();
      if (c === undefined) continue; // dropped by pairing repair or compaction
      parts.push(callPart(c, slot));
    } else {
      const d = opaque[ri++];
      if (d !== undefined) parts.push(decodeJson(d.part) as Part);
    }
  }
  for (; ci < content.length; ci++) parts.push(genericPart(content[ci]));
  // Canonical fields without a slot: reasoning from another source, calls added or renamed.
  if (meta.layout === undefined && m.reasoning !== undefined && m.reasoning !== '' && opaque.length === 0)
    parts.unshift({ type: 'reasoning', text: m.reasoning });
  for (; ri < opaque.length; ri++) parts.push(decodeJson(opaque[ri].part) as Part);
  for (const rest of calls.values()) for (const c of rest) parts.push(callPart(c));
  return parts;
}

/**
 * Canonical messages → framework messages. `arrays` forces array content for user and
 * assistant messages (the provider-level prompt requires it).
 */
export function toAiMessages(history: readonly Message[], arrays: boolean): AnyMessage[] {
  const out: AnyMessage[] = [];
  const names = new Map<string, string>();
  for (const m of history) {
    const meta = metaOf(m);
    const options =
      meta.providerOptions === undefined ? {} : { providerOptions: decodeJson(meta.providerOptions) };
    for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
    if (m.role === 'tool') {
      const prev = out[out.length - 1];
      const target =
        meta.continues === true && prev?.role === 'tool'
          ? prev
          : { role: 'tool', content: [] as Part[], ...options };
      if (target !== prev) out.push(target);
      const parts = target.content as Part[];
      for (const b of meta.before ?? []) parts.push(decodeJson(b) as Part);
      if (m.toolCallId !== undefined) {
        const result: Part = {
          type: 'tool-result',
          toolCallId: m.toolCallId,
          toolName: m.toolName ?? names.get(m.toolCallId) ?? '',
          output: restoreOutput(meta.output === undefined ? undefined : decodeJson(meta.output), m.content),
        };
        if (meta.po !== undefined) result.providerOptions = decodeJson(meta.po);
        parts.push(result);
      }
      for (const a of meta.after ?? []) parts.push(decodeJson(a) as Part);
    } else if (m.role === 'system') {
      const text =
        typeof m.content === 'string'
          ? m.content
          : m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
      out.push({ role: 'system', content: text, ...options });
    } else if (
      typeof m.content === 'string' &&
      meta.layout === undefined &&
      !arrays &&
      !m.toolCalls?.length &&
      !m.reasoning
    ) {
      out.push({ role: m.role, content: m.content, ...options });
    } else {
      out.push({ role: m.role, content: toContentParts(m, meta), ...options });
    }
  }
  return out;
}

/** AI SDK `ModelMessage`s → Compactor's canonical messages (lossless; see {@link toModelMessages}). */
export function fromModelMessages(messages: readonly ModelMessage[]): Message[] {
  return fromAiMessages(messages as unknown as AnyMessage[]);
}

/** Canonical messages → AI SDK `ModelMessage`s; `toModelMessages(fromModelMessages(x))` equals `x`. */
export function toModelMessages(history: readonly Message[]): ModelMessage[] {
  return toAiMessages(history, false) as unknown as ModelMessage[];
}
