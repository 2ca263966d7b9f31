import { z } from 'zod';
import { RecordSchema, type Json, type Message } from '../messages/message.js';
import { inputError, placeOf, validate } from './input-error.js';
import { parseJsonLines } from './json-text.js';
import { isObj } from './detect.js';
import type { ImportedSession, ImportResult, SessionFormat } from './types.js';

/** Gemini CLI `--output-format stream-json`: one event a line. */
const EventSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('init'), session_id: z.string().optional(), model: z.string().optional() }),
  z.looseObject({
    type: z.literal('message'),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    delta: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal('tool_use'),
    tool_name: z.string(),
    tool_id: z.string(),
    parameters: RecordSchema.optional(),
  }),
  z.looseObject({
    type: z.literal('tool_result'),
    tool_id: z.string(),
    status: z.string().optional(),
    output: z.string().optional(),
    error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }).optional(),
  }),
  z.looseObject({ type: z.literal('result'), status: z.string().optional(), stats: z.unknown().optional() }),
  z.looseObject({ type: z.literal('error'), message: z.string().optional() }),
]);

type ToolResultEvent = Extract<z.infer<typeof EventSchema>, { type: 'tool_result' }>;

/** A tool_result event as a tool message; a failed call keeps its status and error. */
function toolResultMessage(e: ToolResultEvent, metadata: Record<string, Json>, name?: string): Message {
  const failed = e.status === 'error';
  // A failed call reports its reason in `error`; the output is often empty then.
  const content = e.output || (failed ? (e.error?.message ?? '') : '');
  const meta: Record<string, Json> = { ...metadata };
  if (e.status) meta.status = e.status;
  if (failed) meta.isError = true;
  if (e.error) meta.error = e.error as Json;
  return {
    role: 'tool',
    content,
    toolCallId: e.tool_id,
    ...(name ? { toolName: name } : {}),
    metadata: meta,
  };
}

/**
 * Imports Gemini CLI stream-json. Streamed assistant chunks (`delta`) join into one
 * message; tool_use events attach to the current assistant turn (consecutive ones form a
 * parallel batch); each `init` starts a new session.
 */
export function importGeminiCli(text: string, fileName?: string): ImportResult {
  const lines = parseJsonLines(text, fileName);
  if (lines.length === 0) throw inputError(placeOf(fileName), 'empty input');
  const sessions: ImportedSession[] = [];
  let hasInit = false;
  const names = new Map<string, string>();
  const current = (): ImportedSession => {
    if (sessions.length === 0) sessions.push({ id: 'session-1', messages: [], meta: {} });
    return sessions[sessions.length - 1];
  };
  for (const { line, value } of lines) {
    const e = validate(EventSchema, value, placeOf(fileName, `line ${line}`));
    const stamp = (value as { timestamp?: unknown }).timestamp;
    const ts = typeof stamp === 'string' ? stamp : undefined;
    const metadata: Record<string, Json> = ts ? { timestamp: ts } : {};
    if (e.type === 'init') {
      // Lines before the first init (the wrapper's prompt) belong to the first session.
      if (hasInit) sessions.push({ id: `session-${sessions.length + 1}`, messages: [], meta: {} });
      const s = current();
      hasInit = true;
      if (e.session_id) s.id = e.session_id;
      s.meta.model = e.model;
      continue;
    }
    const s = current();
    const last = s.messages[s.messages.length - 1];
    if (e.type === 'message') {
      if (
        e.role === 'assistant' &&
        last?.role === 'assistant' &&
        !last.toolCalls &&
        typeof last.content === 'string'
      ) {
        last.content += e.content; // streamed chunks
      } else s.messages.push({ role: e.role, content: e.content, ...(ts ? { metadata } : {}) });
    } else if (e.type === 'tool_use') {
      const call = { id: e.tool_id, name: e.tool_name, arguments: JSON.stringify(e.parameters ?? {}) };
      names.set(e.tool_id, e.tool_name);
      if (last?.role === 'assistant') (last.toolCalls ??= []).push(call);
      else
        s.messages.push({ role: 'assistant', content: '', toolCalls: [call], ...(ts ? { metadata } : {}) });
    } else if (e.type === 'tool_result') {
      s.messages.push(toolResultMessage(e, metadata, names.get(e.tool_id)));
    } else if (e.type === 'result') {
      s.meta.status = e.status;
      s.meta.stats = e.stats;
    } else s.meta.error = e.message;
  }
  const out = sessions.filter((s) => s.messages.length > 0 || s.meta.model !== undefined);
  if (out.length === 0) throw inputError(placeOf(fileName), 'no Gemini CLI events');
  return { format: 'gemini-cli', file: fileName, sessions: out };
}

const GEMINI_EVENT_TYPES = new Set(['init', 'message', 'tool_use', 'tool_result', 'result']);

/** Gemini CLI stream events: typed lines without Codex's `payload` or a Responses `call_id`. */
export const geminiCliFormat: SessionFormat<'gemini-cli'> = {
  name: 'gemini-cli',
  detect: [
    {
      kind: 'line',
      order: 40,
      test: (v) =>
        isObj(v) &&
        GEMINI_EVENT_TYPES.has(String(v.type)) &&
        !('payload' in v) &&
        !('call_id' in v) &&
        (v.type !== 'message' || 'role' in v),
    },
  ],
  import: importGeminiCli,
};
