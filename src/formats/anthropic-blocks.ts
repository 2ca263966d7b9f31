import { z } from 'zod';
import {
  RecordSchema,
  type Content,
  type ContentPart,
  type Json,
  type Message,
  type ToolCall,
} from '../messages/message.js';
import { inputError, validate } from './input-error.js';

/**
 * Anthropic Messages content blocks ↔ canonical messages. Shared by the
 * Anthropic importer and the Claude Code importer (whose lines carry API messages).
 */
const BlockSchema = z.looseObject({ type: z.string() });
const TextBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
const ToolUseSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: RecordSchema,
});
const ToolResultSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(BlockSchema)]).optional(),
  is_error: z.boolean().optional(),
});
const ThinkingSchema = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
/** Message content: a string or a list of typed blocks. */
export const AnthropicContentSchema = z.union([z.string(), z.array(BlockSchema)]);

type Block = Record<string, unknown> & { type: string };

function partFromBlock(b: Block, where: string, path: string): ContentPart | undefined {
  if (b.type === 'text') return { type: 'text', text: validate(TextBlockSchema, b, where, path).text };
  const src = b.source as Record<string, unknown> | undefined;
  if ((b.type === 'image' || b.type === 'document') && src && typeof src === 'object') {
    const kind = b.type === 'image' ? 'image' : 'file';
    if (src.type === 'base64' && typeof src.data === 'string')
      return {
        type: kind,
        data: src.data,
        ...(typeof src.media_type === 'string' ? { mimeType: src.media_type } : {}),
      };
    if (src.type === 'url' && typeof src.url === 'string') return { type: kind, url: src.url };
    if (kind === 'file' && src.type === 'file' && typeof src.file_id === 'string')
      return { type: 'file', fileId: src.file_id };
  }
  return undefined; // search_result, container_upload …: kept by the residual only
}

/** Canonical content from Anthropic content (string stays string; unmodelled blocks are skipped). */
export function contentFromBlocks(c: string | Block[], where: string, path: string): Content {
  if (typeof c === 'string') return c;
  const parts: ContentPart[] = [];
  c.forEach((b, i) => {
    const p = partFromBlock(b, where, `${path}[${i}]`);
    if (p) parts.push(p);
  });
  return parts;
}

/** One assistant message from its content: text/image parts, tool calls, opaque items verbatim. */
export function assistantFromContent(c: string | Block[], where: string, path: string): Message {
  if (typeof c === 'string') return { role: 'assistant', content: c };
  const parts: ContentPart[] = [];
  const calls: ToolCall[] = [];
  const details: Json[] = [];
  const reasoning: string[] = [];
  c.forEach((b, i) => {
    const p = `${path}[${i}]`;
    if (b.type === 'tool_use') {
      const t = validate(ToolUseSchema, b, where, p);
      calls.push({ id: t.id, name: t.name, arguments: JSON.stringify(t.input) });
      return;
    }
    if (b.type === 'thinking') reasoning.push(validate(ThinkingSchema, b, where, p).thinking);
    const part = b.type === 'thinking' ? undefined : partFromBlock(b, where, p);
    if (part) parts.push(part);
    else details.push(b as Json); // thinking, redacted_thinking, compaction, server tools …
  });
  const m: Message = { role: 'assistant', content: parts };
  if (calls.length > 0) m.toolCalls = calls;
  if (reasoning.length > 0) m.reasoning = reasoning.join('\n');
  if (details.length > 0) m.reasoningDetails = details;
  return m;
}

/**
 * A user message's content as canonical messages, in order: each tool_result becomes a
 * tool message (is_error kept in metadata), runs of other blocks become user messages.
 */
export function userFromContent(c: string | Block[], where: string, path: string): Message[] {
  if (typeof c === 'string') return [{ role: 'user', content: c }];
  const out: Message[] = [];
  let pending: ContentPart[] | undefined;
  const flush = () => {
    if (pending) out.push({ role: 'user', content: pending });
    pending = undefined;
  };
  c.forEach((b, i) => {
    if (b.type !== 'tool_result') {
      // A run of blocks that are not results is one user message, even if none is modelled.
      pending ??= [];
      const part = partFromBlock(b, where, `${path}[${i}]`);
      if (part) pending.push(part);
      return;
    }
    flush();
    const r = validate(ToolResultSchema, b, where, `${path}[${i}]`);
    const m: Message = {
      role: 'tool',
      content:
        r.content === undefined
          ? ''
          : contentFromBlocks(r.content as Block[] | string, where, `${path}[${i}].content`),
      toolCallId: r.tool_use_id,
    };
    if (r.is_error !== undefined) m.metadata = { isError: r.is_error };
    out.push(m);
  });
  flush();
  return out;
}

function partToBlock(p: ContentPart): Json {
  if (p.type === 'text') return { type: 'text', text: p.text };
  const source: Record<string, Json> =
    p.data !== undefined
      ? {
          type: 'base64',
          media_type: p.mimeType ?? (p.type === 'image' ? 'image/png' : 'application/pdf'),
          data: p.data,
        }
      : p.type === 'file' && p.fileId !== undefined && p.url === undefined
        ? { type: 'file', file_id: p.fileId }
        : { type: 'url', url: p.url ?? '' };
  return { type: p.type === 'image' ? 'image' : 'document', source };
}

/** Anthropic content for canonical content (string stays a string). */
export function contentToBlocks(c: Content): Json {
  return typeof c === 'string' ? c : c.map(partToBlock);
}

function toolInput(args: string): Json {
  try {
    const v = JSON.parse(args) as Json;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    /* non-JSON arguments from another format */
  }
  return args === '' ? {} : { input: args };
}

/** The plain Anthropic assistant message: opaque items first, then text, then tool_use blocks. */
export function assistantToAnthropic(m: Message): Json {
  const calls = m.toolCalls ?? [];
  const details = (m.reasoningDetails ?? []).filter(
    (d) => d !== null && typeof d === 'object' && !Array.isArray(d) && typeof d.type === 'string',
  );
  if (typeof m.content === 'string' && calls.length === 0 && details.length === 0)
    return { role: 'assistant', content: m.content };
  const blocks: Json[] = [...details];
  if (typeof m.content === 'string') {
    if (m.content !== '') blocks.push({ type: 'text', text: m.content });
  } else blocks.push(...m.content.map(partToBlock));
  for (const c of calls)
    blocks.push({
      type: 'tool_use',
      id: c.id,
      name: c.name,
      input: toolInput(c.freeformInput ?? c.arguments),
    });
  return { role: 'assistant', content: blocks };
}

/** One Anthropic user message from a run of user and tool messages (results become tool_result blocks). */
export function userToAnthropic(ms: readonly Message[]): Json {
  if (ms.length === 1 && ms[0].role !== 'tool' && typeof ms[0].content === 'string')
    return { role: 'user', content: ms[0].content };
  const blocks: Json[] = [];
  for (const m of ms) {
    if (m.role === 'tool') {
      const b: Record<string, Json> = {
        type: 'tool_result',
        tool_use_id: m.toolCallId ?? '',
        content: contentToBlocks(m.content),
      };
      if (typeof m.metadata?.isError === 'boolean') b.is_error = m.metadata.isError;
      blocks.push(b);
    } else if (typeof m.content === 'string') blocks.push({ type: 'text', text: m.content });
    else blocks.push(...m.content.map(partToBlock));
  }
  return { role: 'user', content: blocks };
}

/** Throws the one-line input error for a block list that is not a list of typed blocks. */
export function checkContent(value: unknown, where: string, path: string): string | Block[] {
  const r = AnthropicContentSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw inputError(where, `${path}: ${issue.message}`);
  }
  return r.data as string | Block[];
}
