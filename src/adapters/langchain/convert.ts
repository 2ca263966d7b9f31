import type { BaseMessage } from '@langchain/core/messages';
import type { ContentPart, Json, Message, ToolCall } from '../../messages/message.js';
import { decodeJson, encodeJson, sameJson } from '../shared/json-value.js';
import { messages as lc } from './peers.js';

/**
 * LangChain `BaseMessage` ⇄ canonical messages. Text, tool calls (`AIMessage.tool_calls`) and
 * tool results (`ToolMessage`) become canonical fields; image blocks become media references;
 * everything else (ids, names, reasoning and other content blocks, `additional_kwargs`,
 * `response_metadata`, status, artifacts) rides along under `metadata.langchain` and comes
 * back as it was. Messages or tool calls without ids convert too (ids become `''`).
 */

interface LangChainMeta {
  /** The message's LangChain type (`human`, `ai`, `system`, `tool`, …). */
  kind: string;
  /** The original content blocks, when the content was an array. */
  blocks?: Json;
  /** Every other field worth keeping, JSON-encoded. */
  fields?: Json;
}

const KEY = 'langchain';
const KEPT_FIELDS = [
  'id',
  'name',
  'additional_kwargs',
  'response_metadata',
  'usage_metadata',
  'invalid_tool_calls',
  'status',
  'artifact',
] as const;

type Block = {
  type?: string;
  text?: unknown;
  image_url?: unknown;
  url?: unknown;
  reasoning?: unknown;
  thinking?: unknown;
  mime_type?: unknown;
  mimeType?: unknown;
};

function blockUrl(b: Block): string | undefined {
  if (typeof b.image_url === 'string') return b.image_url;
  const nested = (b.image_url as { url?: unknown } | undefined)?.url;
  if (typeof nested === 'string') return nested;
  return typeof b.url === 'string' ? b.url : undefined;
}

/** Canonical content of LangChain content: text as text, images and files as references, other blocks left out. */
function contentOf(content: unknown): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: ContentPart[] = [];
  for (const raw of content as Block[]) {
    if (typeof raw === 'string') out.push({ type: 'text', text: raw });
    else if (raw?.type === 'text')
      out.push({ type: 'text', text: typeof raw.text === 'string' ? raw.text : '' });
    else if (raw?.type === 'image_url' || raw?.type === 'image' || raw?.type === 'file') {
      const url = blockUrl(raw);
      const mime =
        typeof raw.mime_type === 'string'
          ? raw.mime_type
          : typeof raw.mimeType === 'string'
            ? raw.mimeType
            : undefined;
      const part: ContentPart = raw.type === 'file' ? { type: 'file' } : { type: 'image' };
      if (url !== undefined) part.url = url;
      if (mime !== undefined) part.mimeType = mime;
      out.push(part);
    }
  }
  return out;
}

function reasoningOf(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const texts = (content as Block[])
    .map((b) => (b?.type === 'reasoning' ? b.reasoning : b?.type === 'thinking' ? b.thinking : undefined))
    .filter((t): t is string => typeof t === 'string');
  return texts.length > 0 ? texts.join('\n') : undefined;
}

const ROLE: Record<string, Message['role']> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
  tool: 'tool',
};

/** LangChain messages → canonical messages (lossless; see {@link toBaseMessages}). Never mutates the input. */
export function fromBaseMessages(messages: readonly BaseMessage[]): Message[] {
  return messages.map((m) => {
    const kind = typeof m.type === 'string' ? m.type : 'human';
    const role = ROLE[kind] ?? 'user';
    const out: Message = { role, content: contentOf(m.content) };
    const reasoning = reasoningOf(m.content);
    if (reasoning !== undefined) out.reasoning = reasoning;
    const calls =
      (m as { tool_calls?: Array<{ id?: string; name: string; args: unknown }> }).tool_calls ?? [];
    if (role === 'assistant' && calls.length > 0)
      out.toolCalls = calls.map((c): ToolCall => ({
        id: c.id ?? '',
        name: c.name ?? '',
        arguments: JSON.stringify(encodeJson(c.args ?? {})),
      }));
    if (role === 'tool') {
      out.toolCallId = (m as { tool_call_id?: string }).tool_call_id ?? '';
      if (typeof m.name === 'string') out.toolName = m.name;
    }
    const fields: Record<string, unknown> = {};
    for (const f of KEPT_FIELDS)
      if ((m as unknown as Record<string, unknown>)[f] !== undefined)
        fields[f] = (m as unknown as Record<string, unknown>)[f];
    const meta: LangChainMeta = { kind, fields: encodeJson(fields) };
    if (Array.isArray(m.content)) meta.blocks = encodeJson(m.content);
    out.metadata = { [KEY]: meta as unknown as Json };
    return out;
  });
}

/** Arguments as LangChain wants them (an object); other JSON is wrapped so nothing is lost. */
function argsObject(raw: string): Record<string, unknown> {
  try {
    const v = decodeJson(JSON.parse(raw) as Json);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // not JSON: wrapped below
  }
  return { input: raw };
}

function contentBack(m: Message, meta: LangChainMeta | undefined): unknown {
  const blocks = meta?.blocks === undefined ? undefined : decodeJson(meta.blocks);
  if (blocks !== undefined && sameJson(contentOf(blocks), m.content)) return blocks;
  if (typeof m.content === 'string') return m.content;
  return m.content.map((p) =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : { type: 'image_url', image_url: { url: p.url ?? '' } },
  );
}

/** Canonical messages → LangChain messages; `toBaseMessages(fromBaseMessages(x))` equals `x`. */
export function toBaseMessages(history: readonly Message[]): BaseMessage[] {
  return history.map((m) => {
    const raw = m.metadata?.[KEY];
    const meta =
      raw !== null && typeof raw === 'object' && !Array.isArray(raw)
        ? (raw as unknown as LangChainMeta)
        : undefined;
    const fields = (meta?.fields === undefined ? {} : decodeJson(meta.fields)) as Record<string, unknown>;
    const content = contentBack(m, meta) as string;
    if (m.role === 'system') return new lc.SystemMessage({ ...fields, content });
    if (m.role === 'tool')
      return new lc.ToolMessage({
        ...fields,
        content,
        tool_call_id: m.toolCallId ?? '',
        ...(m.toolName !== undefined ? { name: m.toolName } : {}),
      });
    if (m.role === 'assistant')
      return new lc.AIMessage({
        ...fields,
        content,
        tool_calls: (m.toolCalls ?? []).map((c) => ({
          ...(c.id !== '' ? { id: c.id } : {}),
          name: c.name,
          args: argsObject(c.arguments),
          type: 'tool_call' as const,
        })),
      });
    return new lc.HumanMessage({ ...fields, content });
  });
}
