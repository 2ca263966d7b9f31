import { z } from 'zod';
import type { Message, ToolCall } from '../messages/message.js';
import { recallIdOf } from '../projection/recall-ids.js';
import { isClearedStub } from '../projection/stubs.js';
import {
  SPAN_METADATA_KEY,
  spanIndexOf,
  SpanIndexSchema,
  withSpanIndex,
  type SpanIndex,
} from '../projection/recall-spans.js';
import { callsById, spanEntryOf } from '../summary/span-pointers.js';

/**
 * The messages a turn wrote itself, written by reference where they repeat what is durable
 * already. A summary message is its summary text (which the checkpoint keeps once, among the
 * texts) between a short head and tail, and its span index has one entry per tool result the
 * summary replaced, each derived from that result in the base history (which the event log
 * holds): it is written as runs of base indexes. Written whole, both made a checkpoint that
 * grew with the history.
 */

const RunSchema = z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]);

/** What one written message refers to instead of holding it. */
export const WrittenRefSchema = z.object({
  /** Its content is `head`, the text stored under `text`, then `tail`. */
  content: z.object({ text: z.string().min(1), head: z.string(), tail: z.string() }).optional(),
  /**
   * Its span index's entries: a run `[start, end)` of base indexes stands for the entries of
   * the tool results there, cleared ones left out as a span leaves them (derived again on
   * resume); an entry that is not derived that way is written as it is.
   */
  spanResults: z.array(z.union([RunSchema, SpanIndexSchema.shape.results.element])).optional(),
});
/** See {@link WrittenRefSchema}. */
export type WrittenRef = z.infer<typeof WrittenRefSchema>;

// Texts shorter than this are not worth a reference.
const MIN_TEXT = 256;

/** The tool results of a history by recall id, and its calls by id (to derive span entries). */
interface BaseLookup {
  byId: Map<string, number>;
  calls: Map<string, ToolCall>;
}

/** Whether a span index lists `m` (a tool result that is not a cleared stub). */
const isListedResult = (m: Message) => m.role === 'tool' && m.toolCallId !== undefined && !isClearedStub(m);

function lookup(base: readonly Message[]): BaseLookup {
  const byId = new Map<string, number>();
  base.forEach((m, i) => {
    if (!isListedResult(m)) return;
    const id = recallIdOf(m);
    if (!byId.has(id)) byId.set(id, i);
  });
  return { byId, calls: callsById(base) };
}

/** Writes the turn's own messages against one base (see the file comment). */
export class WrittenEncoder {
  private base: BaseLookup | undefined;
  private readonly spans = new WeakMap<
    Message,
    { index: SpanIndex; json: WrittenRef['spanResults'] } | null
  >();

  constructor(private readonly history: readonly Message[]) {}

  /** The messages as the checkpoint holds them, and what each refers to (by position). */
  encode(
    written: readonly Message[],
    texts: Readonly<Record<string, string>>,
  ): { written: Message[]; refs: Record<string, WrittenRef> } {
    const refs: Record<string, WrittenRef> = {};
    const out = written.map((m, k) => {
      let held = m;
      const ref: WrittenRef = {};
      const span = this.spanOf(m);
      if (span) {
        ref.spanResults = span.json;
        held = withSpanIndex(held, { ...span.index, results: [] });
      }
      const content = typeof m.content === 'string' ? contentRef(m.content, texts) : undefined;
      if (content) {
        ref.content = content;
        held = { ...held, content: '' };
      }
      if (held !== m) refs[String(k)] = ref;
      return held;
    });
    return { written: out, refs };
  }

  private spanOf(m: Message) {
    let known = this.spans.get(m);
    if (known !== undefined) return known;
    const index = spanIndexOf(m);
    // Only an index read back exactly as it stands (no key the schema would drop).
    const exact =
      index !== null &&
      index.results.length > 0 &&
      JSON.stringify(index) === JSON.stringify(m.metadata?.[SPAN_METADATA_KEY]);
    known = exact ? { index, json: this.runs(index) } : null;
    this.spans.set(m, known);
    return known;
  }

  /** Whether base messages `[start, end)` hold a tool result a span would list. */
  private anyResultIn(start: number, end: number): boolean {
    for (let i = start; i < end; i++) if (isListedResult(this.history[i]!)) return true;
    return false;
  }

  private runs(index: SpanIndex): NonNullable<WrittenRef['spanResults']> {
    const { byId, calls } = (this.base ??= lookup(this.history));
    const out: NonNullable<WrittenRef['spanResults']> = [];
    let run: [number, number] | null = null;
    for (const e of index.results) {
      const i = byId.get(e.id);
      const again = i === undefined ? undefined : spanEntryOf(this.history[i]!, calls);
      if (i === undefined || again?.id !== e.id || again.line !== e.line) {
        run = null;
        out.push(e);
      } else if (run !== null && run[1] <= i && !this.anyResultIn(run[1], i)) {
        run[1] = i + 1;
      } else {
        run = [i, i + 1];
        out.push(run);
      }
    }
    return out;
  }
}

/** The longest stored text `content` holds, as a reference with what comes before and after it. */
function contentRef(content: string, texts: Readonly<Record<string, string>>): WrittenRef['content'] {
  let best: WrittenRef['content'];
  let bestLength = MIN_TEXT - 1;
  for (const [ref, text] of Object.entries(texts)) {
    if (text.length <= bestLength) continue;
    const at = content.indexOf(text);
    if (at < 0) continue;
    best = { text: ref, head: content.slice(0, at), tail: content.slice(at + text.length) };
    bestLength = text.length;
  }
  return best;
}

/**
 * The messages {@link WrittenEncoder.encode} wrote, whole again over `base` and `texts`; a
 * string naming what is wrong when a reference does not resolve.
 */
export function decodeWritten(
  written: readonly Message[],
  refs: Readonly<Record<string, WrittenRef>> | undefined,
  base: readonly Message[],
  texts: Readonly<Record<string, string>>,
): Message[] | string {
  if (!refs) return [...written];
  const out = [...written];
  let found: BaseLookup | undefined;
  for (const [key, ref] of Object.entries(refs)) {
    const k = Number(key);
    let m = written[k];
    if (!Number.isInteger(k) || m === undefined) return `writtenRefs.${key}: no such written message`;
    if (ref.content) {
      const text = texts[ref.content.text];
      if (text === undefined) return `writtenRefs.${key}: no text "${ref.content.text}"`;
      m = { ...m, content: `${ref.content.head}${text}${ref.content.tail}` };
    }
    if (ref.spanResults) {
      const index = spanIndexOf(m);
      if (!index) return `writtenRefs.${key}: the message has no span index`;
      const { calls } = (found ??= { byId: new Map(), calls: callsById(base) });
      const results: SpanIndex['results'] = [];
      for (const item of ref.spanResults) {
        if (!Array.isArray(item)) {
          results.push(item);
          continue;
        }
        const [start, end] = item;
        if (end > base.length || start > end) return `writtenRefs.${key}: a run lies outside the history`;
        for (let i = start; i < end; i++)
          if (isListedResult(base[i]!)) results.push(spanEntryOf(base[i]!, calls));
      }
      m = withSpanIndex(m, { ...index, results });
    }
    out[k] = m;
  }
  return out;
}
