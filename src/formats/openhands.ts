import { z } from 'zod';
import { RecordSchema, type Json, type Message, type ToolCall } from '../messages/message.js';
import { inputError, placeOf, validate } from './input-error.js';
import { parseJsonLines, type JsonLine } from './json-text.js';
import { isObj } from './detect.js';
import type { ImportedSession, ImportResult, SessionFormat } from './types.js';

/** OpenHands output.jsonl: one task per line, 2025 event stream or 2024 flat history. */
const LineSchema = z.looseObject({
  instance_id: z.string().optional(),
  issue: z.looseObject({ owner: z.unknown(), repo: z.unknown(), number: z.unknown() }).optional(),
  history: z.array(RecordSchema),
  metadata: RecordSchema.nullish(),
});
const EventSchema = z.looseObject({
  id: z.number().optional(),
  source: z.string().optional(),
  action: z.string().optional(),
  observation: z.string().optional(),
  cause: z.number().nullish(),
  content: z.string().nullish(),
  message: z.string().nullish(),
  args: RecordSchema.optional(),
  tool_call_metadata: z
    .looseObject({
      function_name: z.string(),
      tool_call_id: z.string(),
      model_response: RecordSchema.optional(),
    })
    .nullish(),
});
type Event = z.infer<typeof EventSchema>;

interface ResponseMessage {
  content?: unknown;
  tool_calls?: Array<{ id?: unknown; function?: { arguments?: unknown } }>;
}

function responseMessage(e: Event): ResponseMessage | undefined {
  const choices = e.tool_call_metadata?.model_response?.choices;
  return Array.isArray(choices)
    ? ((choices[0] as { message?: ResponseMessage })?.message ?? undefined)
    : undefined;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A system prompt, a message or the final answer as a message; undefined for bookkeeping actions. */
function plainActionMessage(
  e: z.infer<typeof EventSchema>,
  metadata: Record<string, Json>,
): Message | undefined {
  const content = str(e.args?.content) || str(e.message);
  if (e.action === 'system') return { role: 'system', content, metadata };
  if (e.action === 'message') return { role: e.source === 'user' ? 'user' : 'assistant', content, metadata };
  if (e.action !== 'finish') return undefined;
  const text = str(e.args?.final_thought) || str(e.args?.thought) || str(e.message);
  return { role: 'assistant', content: text, metadata };
}

/** The 2025 event stream: actions with tool_call_metadata are calls, observations answer them via `cause`. */
function importEventStream(history: Record<string, unknown>[], where: string): Message[] {
  const messages: Message[] = [];
  const callByAction = new Map<number, ToolCall>();
  let batch: { responseId: string; message: Message } | undefined;
  let skipped = 0;
  history.forEach((raw, i) => {
    const e = validate(EventSchema, raw, where, `history[${i}]`);
    const metadata: Record<string, Json> = { openhands: { id: e.id ?? null, timestamp: str(raw.timestamp) } };
    const tcm = e.tool_call_metadata;
    if (e.action !== undefined && tcm) {
      const rm = responseMessage(e);
      const args = { ...(e.args ?? {}) };
      const thought = str(args.thought);
      delete args.thought;
      const fromResponse = rm?.tool_calls?.find((c) => c.id === tcm.tool_call_id)?.function?.arguments;
      const call: ToolCall = {
        id: tcm.tool_call_id,
        name: tcm.function_name,
        arguments: typeof fromResponse === 'string' ? fromResponse : JSON.stringify(args),
      };
      if (e.id !== undefined) callByAction.set(e.id, call);
      const responseId = str(tcm.model_response?.id);
      // Parallel calls: consecutive actions from one LLM response form one batch.
      if (batch && responseId !== '' && batch.responseId === responseId) {
        batch.message.toolCalls?.push(call);
        return;
      }
      const text = typeof rm?.content === 'string' ? rm.content : thought;
      const message: Message = { role: 'assistant', content: text, toolCalls: [call], metadata };
      messages.push(message);
      batch = { responseId, message };
      return;
    }
    batch = undefined;
    if (e.action !== undefined) {
      const m = plainActionMessage(e, metadata);
      if (m) messages.push(m);
      else skipped++; // recall and other bookkeeping actions
      return;
    }
    if (e.observation !== undefined) {
      const call = e.cause !== null && e.cause !== undefined ? callByAction.get(e.cause) : undefined;
      const content = e.content ?? '';
      const extras = raw.extras as { metadata?: { exit_code?: unknown } } | undefined;
      const exitCode = extras?.metadata?.exit_code;
      const meta: Record<string, Json> = {
        openhands: { ...(metadata.openhands as object), observation: e.observation },
      };
      if (typeof exitCode === 'number') meta.exitCode = exitCode;
      if (call)
        messages.push({ role: 'tool', content, toolCallId: call.id, toolName: call.name, metadata: meta });
      else if (e.observation === 'error' && content !== '')
        messages.push({ role: 'user', content, metadata: meta });
      else skipped++; // recall results, state changes
    }
  });
  if (messages.length === 0) throw inputError(where, 'history: no conversation events');
  if (skipped > 0 && messages[0]) messages[0].metadata = { ...messages[0].metadata, skippedEvents: skipped };
  return messages;
}

/** The 2024 flat history: the first entry is the task, then action/observation pairs by adjacency. */
function importFlatHistory(history: Record<string, unknown>[]): Message[] {
  const messages: Message[] = [];
  let pending: ToolCall | undefined;
  let n = 0;
  for (const h of history) {
    if (typeof h.action === 'string') {
      pending = undefined;
      const thought = str(h.thought);
      if (h.action === 'message') messages.push({ role: 'user', content: str(h.content) });
      else if (h.action === 'finish') messages.push({ role: 'assistant', content: thought });
      else {
        const {
          action: _a,
          thought: _t,
          action_risk: _r,
          is_confirmed: _c,
          keep_prompt: _k,
          kernel_init_code: _i,
          ...args
        } = h;
        pending = { id: `oh-${++n}`, name: h.action, arguments: JSON.stringify(args) };
        messages.push({ role: 'assistant', content: thought, toolCalls: [pending] });
      }
    } else if (typeof h.observation === 'string') {
      const metadata: Record<string, Json> = { openhands: { observation: h.observation } };
      const code = Number(h.exit_code);
      if (h.exit_code !== undefined && Number.isFinite(code)) metadata.exitCode = code;
      if (pending)
        messages.push({
          role: 'tool',
          content: str(h.content),
          toolCallId: pending.id,
          toolName: pending.name,
          metadata,
        });
      else messages.push({ role: 'user', content: str(h.content), metadata });
      pending = undefined;
    }
  }
  return messages;
}

function sessionOf(line: JsonLine, fileName: string | undefined): ImportedSession {
  const where = placeOf(fileName, `line ${line.line}`);
  const doc = validate(LineSchema, line.value, where);
  const eventStream = doc.history.some((h) => 'id' in h && ('source' in h || 'timestamp' in h));
  const messages = eventStream ? importEventStream(doc.history, where) : importFlatHistory(doc.history);
  const issue = doc.issue;
  const id =
    doc.instance_id ??
    (issue ? `${String(issue.owner)}/${String(issue.repo)}#${String(issue.number)}` : `line-${line.line}`);
  const llm = (doc.metadata?.llm_config ?? {}) as { model?: unknown };
  return {
    id,
    messages,
    meta: {
      line: line.line,
      variant: eventStream ? 'event-stream' : 'flat',
      model: llm.model,
      agentClass: doc.metadata?.agent_class,
    },
  };
}

/** Imports an OpenHands output.jsonl: one session per line. */
export function importOpenHands(text: string, fileName?: string): ImportResult {
  const lines = parseJsonLines(text, fileName);
  if (lines.length === 0) throw inputError(placeOf(fileName), 'empty input');
  return { format: 'openhands', file: fileName, sessions: lines.map((l) => sessionOf(l, fileName)) };
}

/** OpenHands evaluation output: a `history` beside the task (`instance_id`, `issue` or `instruction`). */
export const openHandsFormat: SessionFormat<'openhands'> = {
  name: 'openhands',
  detect: [
    {
      kind: 'document',
      order: 40,
      test: (doc) =>
        isObj(doc) &&
        Array.isArray(doc.history) &&
        ('instance_id' in doc || 'issue' in doc || 'instruction' in doc),
    },
    { kind: 'line', order: 10, test: (v) => isObj(v) && Array.isArray(v.history) },
  ],
  import: importOpenHands,
};
