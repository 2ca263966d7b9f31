import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Json, Message } from '../messages/message.js';

/**
 * Span ids: a part of the history a summary replaced is named by `s-` and eight hex digits,
 * derived from the replaced messages and where they started, so the same compaction gives the
 * same id on every run. The summary message keeps the span's index (one entry per tool result
 * it replaced, and the spans it replaced in turn) in its metadata, which travels wherever the
 * history goes: the compaction's boundary event, restored and forked stores, the Restate store.
 */

/** What a span id looks like: `s-` and eight hex digits. */
export const SPAN_ID_PATTERN = /^s-[0-9a-f]{8}$/;

/** The metadata key of a summary message that holds its span's index. */
export const SPAN_METADATA_KEY = 'recallSpan';

const SpanEntrySchema = z.object({ id: z.string(), line: z.string() });

/** The index of one summarized span, as a summary message's metadata holds it. */
export const SpanIndexSchema = z.object({
  id: z.string().regex(SPAN_ID_PATTERN),
  /** One entry per tool result the span held, oldest first: its recall id and its pointer line. */
  results: z.array(SpanEntrySchema),
  /** Spans of earlier summaries this one replaced, oldest first. */
  earlier: z.array(z.string().regex(SPAN_ID_PATTERN)),
});

/** The index of one summarized span. */
export type SpanIndex = z.infer<typeof SpanIndexSchema>;

/** The span id of `span` (the replaced messages, in order) that started at `position`. */
export function spanIdOf(span: readonly Message[], position: number): string {
  const hash = createHash('sha256').update(String(position));
  for (const m of span) hash.update('\u0000').update(JSON.stringify(m));
  return `s-${hash.digest('hex').slice(0, 8)}`;
}

/** The span index a message carries, or null (not a summary with one, or a damaged one). */
export function spanIndexOf(m: Message): SpanIndex | null {
  const raw = m.metadata?.[SPAN_METADATA_KEY];
  if (raw === undefined) return null;
  const parsed = SpanIndexSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** A copy of `m` carrying `index` in its metadata. */
export function withSpanIndex(m: Message, index: SpanIndex): Message {
  return { ...m, metadata: { ...m.metadata, [SPAN_METADATA_KEY]: index as unknown as Json } };
}

/** Every span index `history` holds, by span id (the newest copy wins). */
export function spanIndexes(history: Iterable<Message>): Map<string, SpanIndex> {
  const out = new Map<string, SpanIndex>();
  for (const m of history) {
    if (m.metadata?.[SPAN_METADATA_KEY] === undefined) continue;
    const index = spanIndexOf(m);
    if (index) out.set(index.id, index);
  }
  return out;
}

/**
 * The entries of span `id` and of every earlier span it replaced, newest first (each result
 * once), or null when no message of `history` holds span `id`.
 */
export function spanEntries(
  indexes: ReadonlyMap<string, SpanIndex>,
  id: string,
): Array<{ id: string; line: string }> | null {
  const root = indexes.get(id);
  if (root === undefined) return null;
  const out: Array<{ id: string; line: string }> = [];
  const seen = new Set<string>();
  const visited = new Set<string>();
  const walk = (span: SpanIndex) => {
    if (visited.has(span.id)) return;
    visited.add(span.id);
    for (const e of [...span.results].reverse())
      if (!seen.has(e.id)) {
        seen.add(e.id);
        out.push(e);
      }
    for (const earlier of [...span.earlier].reverse()) {
      const next = indexes.get(earlier);
      if (next) walk(next);
    }
  };
  walk(root);
  return out;
}

/** A pointer line: the recall id, then what the result held. */
export const pointerLine = (entry: { id: string; line: string }): string => `- ${entry.id} ${entry.line}`;

const POINTER_LINE = /^- [rs]-[0-9a-f]{8}\b/;

/** Whether a line of a summary is a pointer line naming a recall id. */
export function isSpanPointerLine(line: string): boolean {
  return POINTER_LINE.test(line.trimStart());
}

/** Lines of a span's index a recall answers at once; `range` reaches the rest. */
export const SPAN_PAGE_LINES = 60;

/**
 * The answer for span `id`: its results newest first, one pointer line each, at most
 * {@link SPAN_PAGE_LINES} of them unless `range` picks others; null when no message holds it.
 */
export function answerSpan(
  history: Iterable<Message>,
  id: string,
  range?: { start: number; end: number },
): string | null {
  const entries = spanEntries(spanIndexes(history), id);
  if (entries === null) return null;
  const start = range?.start ?? 1;
  const end = Math.min(range?.end ?? SPAN_PAGE_LINES, entries.length);
  const shown = entries.slice(start - 1, end).map(pointerLine);
  const which =
    entries.length === 0
      ? 'no tool results'
      : start === 1 && end === entries.length
        ? `all ${entries.length} tool results`
        : `results ${start}-${end} of ${entries.length} (give range for others)`;
  return [
    `${id}: ${which} that summaries replaced, newest first; recall an id for the whole output.`,
    ...shown,
  ].join('\n');
}
