import { z } from 'zod';
import { checkedCopyOfJson, checkedCopyOfObject, checkedCopyOfRecord, type NotJson } from './json-copy.js';

/**
 * The canonical message model. Every importer produces it, every exporter
 * consumes it, and every algorithm (projection, clearing, compaction) works on it.
 * Provider-specific opaque items ride along verbatim in `reasoningDetails`.
 */

/** Any JSON value, kept verbatim (opaque provider items, unknown fields). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * A check that copies: `copy` gives the value's copy, or undefined with what is wrong (the
 * first bad part, its path below the value) as one issue. A check rather than a transform, so
 * a JSON Schema can still be made of the message schema (a transform cannot be written as one).
 */
function copyingSchema<T>(copy: (v: unknown, bad: NotJson) => T | undefined): z.ZodType<T> {
  const schema = z.unknown().check((ctx) => {
    const bad: NotJson = { path: [], message: '' };
    const out = copy(ctx.value, bad);
    if (out !== undefined) ctx.value = out;
    else ctx.issues.push({ code: 'custom', message: bad.message, path: bad.path, input: ctx.value });
  });
  return schema as z.ZodType<unknown> as z.ZodType<T>;
}

/**
 * Any JSON value, copied with its keys in their order, a key named `__proto__` kept as a key
 * (a zod record leaves it out).
 */
export const JsonSchema: z.ZodType<Json> = copyingSchema(checkedCopyOfJson);
/** A JSON object (`{…}`), copied as {@link JsonSchema} copies. */
export const JsonObjectSchema: z.ZodType<{ [key: string]: Json }> = copyingSchema(checkedCopyOfObject);
/**
 * An object whose values are checked elsewhere (a provider item's fields): a new object with its
 * keys, a key named `__proto__` kept, the values as they are.
 */
export const RecordSchema: z.ZodType<Record<string, unknown>> = copyingSchema(checkedCopyOfRecord);

/** Validates a message role. */
export const RoleSchema = z.enum(['system', 'user', 'assistant', 'tool']);
/** Who wrote a message: system, user, assistant or tool. */
export type Role = z.infer<typeof RoleSchema>;

export const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() });
export const ImagePartSchema = z.object({
  type: z.literal('image'),
  /** base64 data (without the data: prefix) or a URL. */
  data: z.string().optional(),
  url: z.string().optional(),
  mimeType: z.string().optional(),
  detail: z.string().optional(),
});
export const FilePartSchema = z.object({
  type: z.literal('file'),
  fileId: z.string().optional(),
  data: z.string().optional(),
  url: z.string().optional(),
  mimeType: z.string().optional(),
  filename: z.string().optional(),
});
/** Validates one part of multi-part content (text, image or file). */
export const ContentPartSchema = z.discriminatedUnion('type', [
  TextPartSchema,
  ImagePartSchema,
  FilePartSchema,
]);
/** One part of multi-part content: text, image or file. */
export type ContentPart = z.infer<typeof ContentPartSchema>;

/** Validates message content: a string or a list of parts. */
export const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);
/** Message content: a plain string or a list of text, image and file parts. */
export type Content = z.infer<typeof ContentSchema>;

/** Validates one tool call of an assistant message. */
export const ToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The arguments exactly as sent (a JSON string for function tools). */
  arguments: z.string(),
  /** Raw payload of a freeform/custom tool (GPT-5 custom tools). */
  freeformInput: z.string().optional(),
  /** Gemini thought signature attached to this call. */
  thoughtSignature: z.string().optional(),
});
/** One tool call of an assistant message: id, tool name and arguments exactly as sent. */
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** Validates one canonical message (what every importer produces). */
export const MessageSchema = z.object({
  role: RoleSchema,
  content: ContentSchema,
  /** Assistant only: the calls this message makes (a "batch" when non-empty). */
  toolCalls: z.array(ToolCallSchema).optional(),
  /** Tool only: the call id this result answers. */
  toolCallId: z.string().optional(),
  /** Tool only: the name of the tool that produced the result. */
  toolName: z.string().optional(),
  /** Visible reasoning text. Not counted by the estimator. */
  reasoning: z.string().optional(),
  /** Opaque provider items kept verbatim (thinking, redacted_thinking, compaction, encrypted reasoning). */
  reasoningDetails: z.array(JsonSchema).optional(),
  /** Free-form per-message metadata (source format ids, timestamps, sidechain flags …). */
  metadata: JsonObjectSchema.optional(),
});
/** One canonical message: role, content, and tool calls or the call id a tool result answers. */
export type Message = z.infer<typeof MessageSchema>;

/** Validates a whole history (an array of messages). */
export const HistorySchema = z.array(MessageSchema);
/** A conversation history, oldest message first; never mutated by Compactor. */
export type History = readonly Message[];

/** Concatenated text of a message's content (non-text parts contribute nothing). */
export function textOf(content: Content): string {
  if (typeof content === 'string') return content;
  let out = '';
  for (const part of content) if (part.type === 'text') out += part.text;
  return out;
}

/** True when the message is an assistant message carrying at least one tool call. */
export function hasToolCalls(m: Message): m is Message & { toolCalls: ToolCall[] } {
  return m.role === 'assistant' && Array.isArray(m.toolCalls) && m.toolCalls.length > 0;
}

/** Constructors keep tests and importers short and uniform. */
export const msg = {
  system: (content: Content, extra: Partial<Message> = {}): Message => ({
    role: 'system',
    content,
    ...extra,
  }),
  user: (content: Content, extra: Partial<Message> = {}): Message => ({ role: 'user', content, ...extra }),
  assistant: (content: Content, toolCalls?: ToolCall[], extra: Partial<Message> = {}): Message =>
    toolCalls && toolCalls.length > 0
      ? { role: 'assistant', content, toolCalls, ...extra }
      : { role: 'assistant', content, ...extra },
  tool: (toolCallId: string, content: Content, toolName?: string, extra: Partial<Message> = {}): Message =>
    toolName === undefined
      ? { role: 'tool', content, toolCallId, ...extra }
      : { role: 'tool', content, toolCallId, toolName, ...extra },
};

/**
 * Where the task is: the user messages that open the conversation before its first answer (system
 * messages among them aside), or the first user message when nothing has answered yet. Agents often
 * send their environment as a user message of its own before the user's request, and both belong to
 * the task. Returns the index range `[first, last]` of those messages, or null when there is no user
 * message.
 */
export function taskRange(messages: readonly Message[]): { first: number; last: number } | null {
  let first = -1;
  let last = -1;
  for (let i = 0; i < messages.length; i++) {
    const role = messages[i].role;
    if (role === 'user') {
      if (first < 0) first = i;
      last = i;
    } else if (role !== 'system') return first < 0 ? firstUser(messages) : { first, last };
  }
  return firstUser(messages);
}

function firstUser(messages: readonly Message[]): { first: number; last: number } | null {
  const i = messages.findIndex((m) => m.role === 'user');
  return i < 0 ? null : { first: i, last: i };
}
