import { z } from 'zod';
import { textOf, type Message } from '../messages/message.js';
import type { ToolSchema } from '../providers/types.js';
import { RECALL_ID_PATTERN, RECALL_TOOL_NAME, recallIdOf } from './recall-ids.js';
import { answerDroppedSpan } from './dropped-pointer.js';
import { answerSpan, SPAN_ID_PATTERN } from './recall-spans.js';
import { isClearedStub } from './stubs.js';

/**
 * The recall tool: one fixed definition (the same bytes in every request of every session),
 * and the pure function that answers a call of it from a session's history.
 */

/** The recall tool's definition; its bytes never change, so a request's tool list stays cacheable. */
export const RECALL_TOOL: Readonly<ToolSchema> = Object.freeze({
  name: RECALL_TOOL_NAME,
  description:
    'Returns the whole output of an earlier tool result cleared or summarized to save room, by the recall id (r-…) ' +
    "it names; a summary's span id (s-…) returns its list. Give range to get only some lines.",
  parameters: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'A recall id (e.g. r-3f9a2c1b) or span id (s-07c1d2e3).' },
      range: {
        type: 'object',
        description: 'Only these lines (1-based, both included).',
        properties: { start: { type: 'integer', minimum: 1 }, end: { type: 'integer', minimum: 1 } },
        required: ['start', 'end'],
        additionalProperties: false,
      },
    },
    required: ['id'],
    additionalProperties: false,
  },
});

const RecallArgsSchema = z.object({
  id: z.string(),
  range: z
    .object({ start: z.number().int().min(1), end: z.number().int().min(1) })
    .refine((r) => r.end >= r.start, 'range.end must not be below range.start')
    .optional(),
});

/** How the answer for a span id no summary has begins. */
export const SPAN_NOT_FOUND = 'recall: no summarized span with id';

/** How the answer for an id no result has begins. */
export const RECALL_NOT_FOUND = 'recall: no tool result with id';

/** What a recall call asks for: an id and, optionally, a range of lines. */
export type RecallArgs = z.infer<typeof RecallArgsSchema>;

/** The answer to a recall call, and whether the id was found. */
export interface RecallAnswer {
  text: string;
  found: boolean;
}

/** Reads a recall call's arguments (an object or its JSON text); a one-line problem otherwise. */
export function parseRecallArgs(args: unknown): RecallArgs | string {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = JSON.parse(args) as unknown;
    } catch {
      return 'recall: the arguments are not JSON';
    }
  }
  const r = RecallArgsSchema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  return `recall: ${issue.path.join('.') || 'arguments'}: ${issue.message}`;
}

/** A message recall can return: a tool result (not a stub), or a user message a small window cut. */
const isRecallable = (m: Message) =>
  m.role === 'tool' ? !isClearedStub(m) : m.role === 'user' && m.toolCallId === undefined;

/** The newest tool result (or cut user message) in `history` with recall id `id`. */
export function findRecalled(history: Iterable<Message>, id: string): Message | undefined {
  let found: Message | undefined;
  for (const m of history) if (isRecallable(m) && recallIdOf(m) === id) found = m;
  return found;
}

/** Lines `start` to `end` of `text` (1-based, both included, cut at the end). */
function linesOf(text: string, start: number, end: number): { text: string; total: number } {
  const lines = text.split('\n');
  return { text: lines.slice(start - 1, end).join('\n'), total: lines.length };
}

/**
 * Answers a recall call from `history` (every message the session ever held, originals
 * included). When `request` (what the model is being sent) already holds the same text, the
 * answer points there instead of sending a second copy, so asking again never loops.
 */
export function answerRecall(
  history: Iterable<Message>,
  args: unknown,
  request: readonly Message[] = [],
): RecallAnswer {
  const parsed = parseRecallArgs(args);
  if (typeof parsed === 'string') return { text: parsed, found: false };
  const { id, range } = parsed;
  if (SPAN_ID_PATTERN.test(id)) {
    // Read twice (a summary's span, else a run of left-out exchanges): `history` may be a generator.
    const all = [...history];
    const index = answerSpan(all, id, range) ?? answerDroppedSpan(all, id, range);
    return index === null
      ? { text: `${SPAN_NOT_FOUND} ${id} in this session`, found: false }
      : { text: index, found: true };
  }
  if (!RECALL_ID_PATTERN.test(id))
    return {
      text: `recall: "${id.slice(0, 40)}" is not a recall id (r- or s- and 8 hex digits)`,
      found: false,
    };
  const original = findRecalled(history, id);
  if (original === undefined) return { text: `${RECALL_NOT_FOUND} ${id} in this session`, found: false };
  const whole = textOf(original.content);
  let text = whole;
  if (range !== undefined) {
    const cut = linesOf(whole, range.start, range.end);
    text = `lines ${range.start}-${Math.min(range.end, cut.total)} of ${cut.total} of ${id}:\n${cut.text}`;
  }
  return alreadyHeld(request, id, [whole, text], original) ?? { text, found: true };
}

/**
 * The answer pointing at the tool result of `request` that already holds one of `texts` (or
 * is `original` itself), so asking again never sends a second copy; undefined when none does.
 */
export function alreadyHeld(
  request: readonly Message[],
  id: string,
  texts: readonly string[],
  original?: Message,
): RecallAnswer | undefined {
  const holder = request.find(
    (m) => isRecallable(m) && (m === original || texts.includes(textOf(m.content))),
  );
  if (holder === undefined) return undefined;
  const where = holder.role === 'tool' ? `the result of call ${holder.toolCallId ?? '?'}` : 'a user message';
  return {
    text: `recall: ${id} is already in this conversation, whole, in ${where}; read it there.`,
    found: true,
  };
}
