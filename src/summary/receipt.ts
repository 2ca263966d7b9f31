import { z } from 'zod';
import { hasToolCalls, textOf, type Message } from '../messages/message.js';
import { oneLine } from '../core/text.js';
import { isSpanPointerLine, pointerLine, spanEntries, spanIndexes } from '../projection/recall-spans.js';
import { ID_PATTERN, ISSUE_PATTERN } from './ids.js';
import { extractSessionFacts } from './offline/extract.js';
import { isExplorationCommand } from './offline/shell.js';
import { summaryMessage } from './rebuild.js';
import { isReinjectionMessage, isSummaryMessage } from './summary-message.js';

/*
 * A compaction's receipt: what the span it replaces must not lose, found deterministically,
 * and where each item landed in the compacted history. An item the compacted history does not
 * carry is added verbatim to the summary, so nothing on the list is lost without a trace.
 */

/**
 * A compaction's receipt: what the replaced span had to keep, every item and where it landed
 * (`kept`: in a message the compacted history keeps; `summary`; `pointer`: on a line naming a
 * recall id; `span`: on a line of the list a span id the summary names returns; `amended`:
 * added verbatim to the summary; `missing`), tokens before and after.
 */
export interface Receipt {
  items: Array<{
    kind: 'request' | 'correction' | 'error' | 'path' | 'command' | 'id';
    /** What the compacted history must contain (verbatim, whitespace folded). */
    key: string;
    /** The line added to the summary when the item is missing. */
    line: string;
    place: 'kept' | 'summary' | 'pointer' | 'span' | 'amended' | 'missing';
    /**
     * For `pointer` and `span`: the recall id whose line names the item, and for `span` the
     * span id whose list holds that line (`recall` with the span id shows it).
     */
    recall?: { id: string; span?: string };
  }>;
  /** Items added verbatim to the summary because the compacted history lacked them. */
  amended: number;
  tokensBefore: number;
  tokensAfter: number;
}

/** An item and where it landed. */
export type ReceiptEntry = Receipt['items'][number];
/** What kind of evidence an item is. */
export type ReceiptKind = ReceiptEntry['kind'];
/** One item of a receipt, before it is checked. */
export type ReceiptItem = Omit<ReceiptEntry, 'place' | 'recall'>;

/** How many items of each kind a receipt holds at most (the newest win). */
const LIMITS: Readonly<Record<ReceiptKind, number>> = {
  request: 1,
  correction: 3,
  error: 3,
  path: 6,
  command: 5,
  id: 4,
};

/** The longest verbatim request kept (longer ones are matched and added by their head). */
const REQUEST_CHARS = 600;

/** Whitespace folded, so a line wrapped differently still matches. */
const fold = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The longest head of a command kept as its key (a summary shows long commands by their first line). */
const COMMAND_CHARS = 200;

/** What identifies a command: its first line, whitespace folded, at most {@link COMMAND_CHARS}. */
const commandKey = (command: string): string => fold(command.split('\n')[0]).slice(0, COMMAND_CHARS);

function userTexts(span: readonly Message[]): string[] {
  return span
    .filter(
      (m) =>
        m.role === 'user' && m.toolCallId === undefined && !isSummaryMessage(m) && !isReinjectionMessage(m),
    )
    .map((m) => textOf(m.content).trim())
    .filter((t) => t !== '' && !/^<command-(?:message|name)>/.test(t));
}

const newest = <T>(list: readonly T[], n: number): T[] => list.slice(Math.max(0, list.length - n));

/** The identifiers named by the user and by the calls of the span, newest last. */
function idsOf(span: readonly Message[]): string[] {
  const seen = new Set<string>();
  for (const m of span) {
    const user = m.role === 'user' && m.toolCallId === undefined;
    const texts = user ? [textOf(m.content)] : hasToolCalls(m) ? m.toolCalls.map((c) => c.arguments) : [];
    for (const t of texts)
      for (const id of [...(t.match(ID_PATTERN) ?? []), ...(user ? (t.match(ISSUE_PATTERN) ?? []) : [])]) {
        seen.delete(id);
        seen.add(id);
      }
  }
  return [...seen];
}

/**
 * The items a compaction of `span` must keep: the latest user request (verbatim), the user's
 * corrections, unresolved errors, paths touched, commands run with their outcome (reads and
 * searches aside: their paths stand for them; a long command by its first line), and ids.
 * Deterministic: the same span gives the same list.
 */
export function extractReceiptItems(span: readonly Message[]): ReceiptItem[] {
  const facts = extractSessionFacts(span);
  const items: ReceiptItem[] = [];
  const latest = userTexts(span).at(-1);
  if (latest !== undefined) {
    const head = fold(latest).slice(0, REQUEST_CHARS);
    items.push({ kind: 'request', key: head, line: `- Latest user request (verbatim): ${head}` });
  }
  for (const r of newest(facts.restrictions, LIMITS.correction))
    items.push({ kind: 'correction', key: fold(r.text), line: `- User correction: ${fold(r.text)}` });
  const unresolved = facts.commands.filter((c) => c.status === 'failed');
  for (const c of newest(unresolved, LIMITS.error)) {
    const exit = c.exitCode === null ? '' : ` (exit ${c.exitCode})`;
    const error = c.errorLine ? `: ${oneLine(c.errorLine, 200)}` : '';
    const key = commandKey(c.command);
    items.push({ kind: 'error', key, line: `- Unresolved: \`${key}\` failed${exit}${error}` });
  }
  const paths = [...facts.filesRead, ...facts.filesModified]
    .sort((a, b) => a.last - b.last)
    .map((f) => f.text);
  for (const p of newest([...new Set(paths)], LIMITS.path))
    items.push({ kind: 'path', key: p, line: `- Path touched: ${p}` });
  // Reads and searches are kept by their paths; the commands listed are those that did something.
  const ran = [...facts.commands]
    .sort((a, b) => a.last - b.last)
    .filter((c) => c.status !== 'failed' && !isExplorationCommand(c.command));
  for (const c of newest(ran, LIMITS.command)) {
    const outcome = c.exitCode === null ? c.status : `exit ${c.exitCode}`;
    const key = commandKey(c.command);
    items.push({ kind: 'command', key, line: `- Ran \`${key}\` (${outcome})` });
  }
  for (const id of newest(idsOf(span), LIMITS.id)) items.push({ kind: 'id', key: id, line: `- Id: ${id}` });
  return items.filter((it) => it.key !== '');
}

/** The messages of `before` that the compacted history no longer holds verbatim: the replaced span. */
export function replacedSpan(before: readonly Message[], after: readonly Message[]): Message[] {
  const kept = new Set(after.map((m) => JSON.stringify(m)));
  return before.filter((m) => !kept.has(JSON.stringify(m)));
}

/** Options of {@link checkReceipt}. */
export interface CheckOptions {
  /**
   * Whether a line of a kept message is a pointer to a removed original (a line naming a recall
   * id). Absent: no message holds pointers.
   */
  isPointer?: (line: string) => boolean;
}

/** Kinds a pointer line can carry: what a call named (its paths, its command, ids in its input). */
const POINTED_KINDS: ReadonlySet<ReceiptKind> = new Set(['path', 'command', 'id']);

/** A line naming a recall id (whitespace folded), that id, and the span id whose list holds it. */
interface Pointer {
  text: string;
  id?: string;
  span?: string;
}

const RECALL_ID = /\br-[0-9a-f]{8}\b/;
const SPAN_LINE = /^- (s-[0-9a-f]{8})\b/;

function pointerOf(line: string, span?: string): Pointer {
  const id = RECALL_ID.exec(line)?.[0];
  return { text: fold(line), ...(id === undefined ? {} : { id }), ...(span === undefined ? {} : { span }) };
}

/** What the compacted history says, split by where it says it. */
interface Landings {
  kept: string[];
  summaries: string[];
  /** Pointer lines the history shows (a clearing stub, a summary's line naming a recall id). */
  pointers: Pointer[];
  /** Lines of the lists that the span ids the summaries name return, one recall away. */
  listed: Pointer[];
}

function landingsOf(after: readonly Message[], isPointer: (line: string) => boolean): Landings {
  const out: Landings = { kept: [], summaries: [], pointers: [], listed: [] };
  const spans = new Set<string>();
  for (const m of after) {
    const text = [textOf(m.content), ...(m.toolCalls ?? []).map((c) => c.arguments)].join('\n');
    const lines = text.split('\n');
    if (isSummaryMessage(m)) {
      const pointed = lines.filter(isSpanPointerLine);
      out.pointers.push(...pointed.map((l) => pointerOf(l)));
      for (const l of pointed) {
        const span = SPAN_LINE.exec(l.trimStart())?.[1];
        if (span !== undefined) spans.add(span);
      }
      out.summaries.push(fold(lines.filter((l) => !isSpanPointerLine(l)).join('\n')));
      continue;
    }
    out.pointers.push(...lines.filter(isPointer).map((l) => pointerOf(l)));
    out.kept.push(fold(lines.filter((l) => !isPointer(l)).join('\n')));
  }
  // A span id counts only when its list resolves from the compacted history itself.
  const indexes = spanIndexes(after);
  for (const span of spans)
    for (const e of spanEntries(indexes, span) ?? []) out.listed.push(pointerOf(pointerLine(e), span));
  return out;
}

/**
 * Where each item landed in the compacted history `after`. A pointer line (a clearing stub, or
 * a summary's line naming a recall id) stands for a removed result, and so does a line of the
 * list a summary's span id returns: what it names lands there when the item is what a call
 * named (a path, a command, an id), and the receipt says which recall id (and span id) holds
 * it. A request, a correction or an error must be said in words.
 */
export function checkReceipt(
  items: readonly ReceiptItem[],
  after: readonly Message[],
  options: CheckOptions = {},
): ReceiptEntry[] {
  const { kept, summaries, pointers, listed } = landingsOf(after, options.isPointer ?? (() => false));
  const has = (texts: readonly string[], key: string) => texts.some((t) => t.includes(key));
  return items.map((it): ReceiptEntry => {
    if (has(kept, it.key)) return { ...it, place: 'kept' };
    if (has(summaries, it.key)) return { ...it, place: 'summary' };
    if (!POINTED_KINDS.has(it.kind)) return { ...it, place: 'missing' };
    const shown = pointers.find((p) => p.text.includes(it.key));
    if (shown) return { ...it, place: 'pointer', ...(shown.id ? { recall: { id: shown.id } } : {}) };
    const inList = listed.find((p) => p.text.includes(it.key));
    if (inList?.id === undefined) return { ...it, place: 'missing' };
    return { ...it, place: 'span', recall: { id: inList.id, span: inList.span } };
  });
}

/** The heading of the lines a receipt adds to a summary. */
export const AMEND_HEADING = '## Kept verbatim';

/**
 * The summary with every missing item added verbatim under one heading (no model call). An
 * empty list leaves the text as it is.
 */
export function amendSummaryText(summary: string, missing: readonly ReceiptItem[]): string {
  if (missing.length === 0) return summary;
  return `${summary.trimEnd()}\n\n${AMEND_HEADING}\n${missing.map((m) => m.line).join('\n')}`;
}

/**
 * The compacted history with the missing items added to its last summary message (a history
 * without one gets a summary message of its own after any leading system messages).
 */
export function amendHistory(after: readonly Message[], missing: readonly ReceiptItem[]): Message[] {
  if (missing.length === 0) return [...after];
  let at = after.length - 1;
  while (at >= 0 && !isSummaryMessage(after[at])) at--;
  if (at < 0) {
    let lead = 0;
    while (lead < after.length && after[lead].role === 'system') lead++;
    const added = summaryMessage(amendSummaryText('', missing).trim());
    return [...after.slice(0, lead), added, ...after.slice(lead)];
  }
  const m = after[at];
  const next: Message = { ...m, content: amendSummaryText(textOf(m.content), missing) };
  return [...after.slice(0, at), next, ...after.slice(at + 1)];
}

const ReceiptEntrySchema = z.object({
  kind: z.enum(['request', 'correction', 'error', 'path', 'command', 'id']),
  key: z.string(),
  line: z.string(),
  place: z.enum(['kept', 'summary', 'pointer', 'span', 'amended', 'missing']),
  recall: z.object({ id: z.string(), span: z.string().optional() }).optional(),
});

/** Validates a stored receipt (a checkpoint or a session store read back from disk). */
export const ReceiptSchema = z.object({
  items: z.array(ReceiptEntrySchema),
  amended: z.number().int().nonnegative(),
  tokensBefore: z.number().nonnegative(),
  tokensAfter: z.number().nonnegative(),
});
