import type { Estimator } from '../estimate/estimator.js';
import { hasToolCalls, textOf, type Message, type ToolCall } from '../messages/message.js';
import { callInputOf } from '../projection/call-input.js';
import { recallIdOf, sizeOf } from '../projection/recall-ids.js';
import {
  pointerLine,
  spanIdOf,
  spanIndexOf,
  withSpanIndex,
  type SpanIndex,
} from '../projection/recall-spans.js';
import { isClearedStub } from '../projection/stubs.js';
import { isExplorationCommand } from './offline/shell.js';
import { commandOf, parseArguments, readResult, toolKind } from './offline/tool-calls.js';
import { SUMMARY_METADATA_KIND } from './summary-message.js';

/*
 * Pointer lines: a summary names every tool result of the span it replaced by its recall id,
 * so nothing a summary replaces is gone for good. The summary shows the newest results one
 * line each, up to a cap that grows with the window, then one span id whose recall lists them
 * all (and those of the summaries it replaced in turn).
 */

/** The heading of the pointer block in a summary. */
export const POINTER_HEADING = '## Recall ids';

/** Pointer lines a summary shows at most, by window: 4 at 4k, 8 at 8k, 16 at 16k, 24 from 24k. */
export function pointerLineCap(capacity: number | null): number {
  if (capacity === null) return MAX_POINTER_LINES;
  return Math.max(4, Math.min(MAX_POINTER_LINES, Math.floor(capacity / 1_000)));
}

const MAX_POINTER_LINES = 24;

/** How a call ended, when its result says more than that it completed: its exit code, or failed. */
function outcomeOf(result: Message): string {
  const { status, exitCode } = readResult(result, textOf(result.content));
  if (exitCode !== null) return ` → exit ${exitCode}`;
  return status === 'completed' ? '' : ` → ${status}`;
}

/** Whether a call changed something or failed (the results a summary most needs to point at). */
function acted(result: Message, call: ToolCall | undefined): boolean {
  if (call === undefined) return false;
  const args = parseArguments(call);
  const kind = toolKind(call, args);
  if (readResult(result, textOf(result.content)).status === 'failed') return true;
  return kind === 'write' || (kind === 'shell' && !isExplorationCommand(commandOf(call, args).trim()));
}

/** The pointer entry of one result: its recall id, tool, input, outcome and size. */
function entryOf(result: Message, call: ToolCall | undefined): { id: string; line: string } {
  const tool = result.toolName ?? call?.name ?? 'tool';
  const input = callInputOf(call);
  const line = `${tool}${input ? `: ${input}` : ''}${outcomeOf(result)} (${sizeOf(result)})`;
  return { id: recallIdOf(result), line };
}

/** The tool calls of `history` by id (a later call with the same id wins). */
export function callsById(history: readonly Message[]): Map<string, ToolCall> {
  const calls = new Map<string, ToolCall>();
  for (const m of history) if (hasToolCalls(m)) for (const c of m.toolCalls) calls.set(c.id, c);
  return calls;
}

/** The span index entry of tool result `result`, whose call `calls` holds. */
export function spanEntryOf(
  result: Message,
  calls: ReadonlyMap<string, ToolCall>,
): { id: string; line: string } {
  return entryOf(result, result.toolCallId === undefined ? undefined : calls.get(result.toolCallId));
}

/** The messages of `before` the rebuilt history `after` no longer holds verbatim, and where they start. */
function replaced(before: readonly Message[], after: readonly Message[]): { span: Message[]; at: number } {
  const kept = new Set(after.map((m) => JSON.stringify(m)));
  const span: Message[] = [];
  let at = -1;
  before.forEach((m, i) => {
    if (kept.has(JSON.stringify(m))) return;
    if (at < 0) at = i;
    span.push(m);
  });
  return { span, at };
}

/**
 * The index of the span `before` lost in `after` (null when it held no tool result and no
 * earlier span), and the entries of the earlier spans it replaced.
 */
export function spanIndexFor(
  before: readonly Message[],
  after: readonly Message[],
): { index: SpanIndex; inherited: SpanIndex['results']; acting: Set<string> } | null {
  const { span, at } = replaced(before, after);
  const calls = callsById(before);
  const results: SpanIndex['results'] = [];
  const earlier: string[] = [];
  const inherited: SpanIndex['results'] = [];
  const acting = new Set<string>();
  for (const m of span) {
    const inner = spanIndexOf(m);
    if (inner) {
      earlier.push(inner.id);
      inherited.push(...inner.results);
    }
    if (m.role !== 'tool' || m.toolCallId === undefined || isClearedStub(m)) continue;
    const call = calls.get(m.toolCallId);
    const entry = entryOf(m, call);
    results.push(entry);
    if (acted(m, call)) acting.add(entry.id);
  }
  if (results.length === 0 && earlier.length === 0) return null;
  return { index: { id: spanIdOf(span, at), results, earlier }, inherited, acting };
}

/** Options of {@link addSpanPointers}. */
export interface SpanPointerOptions {
  estimator: Estimator;
  /** Pointer lines shown at most ({@link pointerLineCap}). */
  maxLines: number;
  /** Tokens the shown lines may take (the room the rebuilt window has left); the span's own line always comes. */
  roomTokens: number;
}

/**
 * The rebuilt history `after` with its last summary message naming what it replaced of
 * `before`: the newest results one pointer line each (within the cap and the room), then the
 * span id, whose index the message keeps in its metadata. Unchanged when the history has no
 * summary of ours or the span held no tool result.
 */
export function addSpanPointers(
  before: readonly Message[],
  after: readonly Message[],
  options: SpanPointerOptions,
): Message[] {
  let at = after.length - 1;
  while (at >= 0 && after[at].metadata?.kind !== SUMMARY_METADATA_KIND) at--;
  if (at < 0) return [...after];
  const found = spanIndexFor(before, after);
  if (found === null) return [...after];
  const { index, inherited, acting } = found;
  // The newest results first (own ones, then those of the summaries this one replaced); calls
  // that changed something or failed take up to half the lines before the rest fill them.
  const candidates = [...new Map([...inherited, ...index.results].reverse().map((e) => [e.id, e])).values()];
  const chosen = new Set<string>();
  let room = options.roomTokens;
  const pick = (e: { id: string; line: string }): boolean => {
    const cost = options.estimator.text(pointerLine(e)) + 1;
    if (chosen.size >= options.maxLines || cost > room) return false;
    room -= cost;
    chosen.add(e.id);
    return true;
  };
  const firstPass = Math.ceil(options.maxLines / 2);
  for (const e of candidates) if (acting.has(e.id) && (chosen.size >= firstPass || !pick(e))) break;
  for (const e of candidates) if (!chosen.has(e.id) && !pick(e)) break;
  const shown = candidates.filter((e) => chosen.has(e.id)).map(pointerLine);
  const total = index.results.length;
  const more = index.earlier.length > 0 ? ' and by the summaries before it' : '';
  const block = [
    POINTER_HEADING,
    'Tool results this summary replaced, newest first; recall with an id returns one whole.',
    ...shown,
    pointerLine({
      id: index.id,
      line: `lists every result replaced here (${total})${more}; recall it for the list.`,
    }),
  ].join('\n');
  const m = after[at];
  const next = withSpanIndex({ ...m, content: `${textOf(m.content).trimEnd()}\n\n${block}` }, index);
  return [...after.slice(0, at), next, ...after.slice(at + 1)];
}
