import { createHash } from 'node:crypto';
import { hasToolCalls, type Message, type ToolCall } from '../messages/message.js';
import { callInputOf } from './call-input.js';
import { recallIdOf, sizeOf } from './recall-ids.js';
import { pointerLine, SPAN_PAGE_LINES, spanIndexOf } from './recall-spans.js';
import { isClearedStub } from './stubs.js';

/*
 * When a window is so small that the oldest exchanges are left out of a request whole, the
 * task message carries one short note naming the newest results they held by recall id, then
 * a span id whose recall lists every earlier result. The span id is derived from the newest
 * left-out result alone, so it resolves from any copy of the history with no index stored,
 * and the note stays the same bytes while the same exchanges are left out.
 */

/** The span id of a run of left-out exchanges whose newest tool result has recall id `newest`. */
export function droppedSpanIdOf(newest: string): string {
  return `s-${createHash('sha256').update('dropped\u0000').update(newest).digest('hex').slice(0, 8)}`;
}

/** Pointer lines a note shows at most, by the room for messages: one per 400 tokens, up to 8. */
export function droppedLineCap(budgetTokens: number): number {
  return Math.max(0, Math.min(8, Math.floor(budgetTokens / 400)));
}

/** The pointer entry of one result: its recall id, then its tool, input and size. */
function entryOf(result: Message, call: ToolCall | undefined): { id: string; line: string } {
  const tool = result.toolName ?? call?.name ?? 'tool';
  const input = callInputOf(call);
  return { id: recallIdOf(result), line: `${tool}${input ? `: ${input}` : ''} (${sizeOf(result)})` };
}

/** Every call of `messages` by its id. */
function callsOf(messages: Iterable<Message>): Map<string, ToolCall> {
  const calls = new Map<string, ToolCall>();
  for (const m of messages) if (hasToolCalls(m)) for (const c of m.toolCalls) calls.set(c.id, c);
  return calls;
}

/**
 * The note maker for left-out messages of a request built from `history`: given them (in
 * order), it names their tool results by the originals the history holds, at most `maxLines`
 * newest first, then the span id. Null when they held no tool result the history has.
 */
export function droppedNotes(
  history: readonly Message[],
): (dropped: readonly Message[], maxLines: number) => string | null {
  const originals = new Map<string, Message>();
  for (const m of history)
    if (m.role === 'tool' && m.toolCallId !== undefined && !isClearedStub(m)) originals.set(m.toolCallId, m);
  const calls = callsOf(history);
  return (dropped, maxLines) => {
    const entries = dropped.flatMap((m) => {
      const original =
        m.role === 'tool' && m.toolCallId !== undefined ? originals.get(m.toolCallId) : undefined;
      return original ? [entryOf(original, calls.get(m.toolCallId ?? ''))] : [];
    });
    if (entries.length === 0) return null;
    const newestFirst = [...entries].reverse();
    return [
      `[compactor: ${dropped.length} older messages were left out to fit the context window, with ` +
        `${entries.length} tool results; recall with an id returns one whole.]`,
      ...newestFirst.slice(0, maxLines).map(pointerLine),
      pointerLine({
        id: droppedSpanIdOf(newestFirst[0].id),
        line: 'lists every earlier tool result; recall it for the list.',
      }),
    ].join('\n');
  };
}

const NOTE_START = '\n\n[compactor: ';
const NOTE_HEAD = /^\n\n\[compactor: \d+ older messages were left out/;

/** A copy of the task message `m` with `note` after its text, in place of a note it had. */
export function withNote(m: Message, note: string): Message {
  if (typeof m.content === 'string') {
    const at = m.content.lastIndexOf(NOTE_START);
    const own = at >= 0 && NOTE_HEAD.test(m.content.slice(at)) ? m.content.slice(0, at) : m.content;
    return { ...m, content: `${own}\n\n${note}` };
  }
  const last = m.content.at(-1);
  const own = last?.type === 'text' && NOTE_HEAD.test(last.text) ? m.content.slice(0, -1) : m.content;
  return { ...m, content: [...own, { type: 'text', text: `\n\n${note}` }] };
}

/**
 * The answer for a span id of left-out exchanges: every tool result up to the newest one it
 * names, newest first, back to the start of the history or the summary before them (named by
 * its own span id); null when no result of `history` gives that id.
 */
export function answerDroppedSpan(
  history: Iterable<Message>,
  id: string,
  range?: { start: number; end: number },
): string | null {
  const all = [...history];
  const at = all.findIndex(
    (m) => m.role === 'tool' && !isClearedStub(m) && droppedSpanIdOf(recallIdOf(m)) === id,
  );
  if (at < 0) return null;
  const calls = callsOf(all);
  const entries: Array<{ id: string; line: string }> = [];
  const seen = new Set<string>();
  for (let i = at; i >= 0; i--) {
    const m = all[i];
    const span = spanIndexOf(m);
    if (span !== null) {
      entries.push({ id: span.id, line: 'the summary before them; recall it for its list.' });
      break;
    }
    if (m.role !== 'tool' || isClearedStub(m)) continue;
    const entry = entryOf(m, calls.get(m.toolCallId ?? ''));
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    entries.push(entry);
  }
  const start = range?.start ?? 1;
  const end = Math.min(range?.end ?? SPAN_PAGE_LINES, entries.length);
  const which =
    start === 1 && end === entries.length
      ? `all ${entries.length}`
      : `${start}-${end} of ${entries.length} (give range for others)`;
  return [
    `${id}: tool results up to the newest left out of the request (${entries[0].id}), ${which}, newest first; recall an id for the whole output.`,
    ...entries.slice(start - 1, end).map(pointerLine),
  ].join('\n');
}
