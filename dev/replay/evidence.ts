import { textOf, type Json, type Message, type ToolCall } from '../../src/messages/message.js';
import { commandOf, parseArguments, toolKind } from '../../src/summary/offline/tool-calls.js';

/**
 * The evidence metric of the retention pilot (how much needed evidence a policy keeps per token).
 *
 * A **turn** is each assistant message of a recorded session: the request sent just before
 * it holds everything recorded earlier. A tool result R is **needed at turn t** when the
 * assistant message at t shows that it used something only R could have told it:
 *
 * 1. an **evidence item** that occurs in the assistant message (its text, or any string value
 *    inside its tool-call arguments, JSON-decoded) and in R, but in no system message, no user
 *    message and no earlier assistant message. When several earlier results contain the item,
 *    the newest of them (the agent's latest sight of it) is the one needed. Items are:
 *    - `path`: a token with at least one `/` whose last segment has an extension of 1–8
 *      alphanumerics (`src/a/b.py`, `/testbed/x.cfg`); bare file names do not count;
 *    - `identifier`: a word `[A-Za-z_][A-Za-z0-9_]*` of ≥ 6 characters that is camelCase /
 *      PascalCase with an inner capital (`lowerUpper`) or snake_case (a `_` between two
 *      letters/digits);
 *    - `code-line`: a whole line (trimmed) of ≥ 12 characters containing one of `( ) { } [ ] ; =`
 *      that appears as a whole trimmed line of the assistant message;
 *    - `error-line`: a whole line (trimmed) of ≥ 12 characters matching
 *      `error|exception|traceback|failed|failure|fatal|panic|assert` (case-insensitive) that
 *      appears as a whole trimmed line of the assistant message;
 * 2. a **re-run**: the assistant calls a read or search tool with the same name and the same
 *    arguments (JSON compared after key sorting) as an earlier call; the newest earlier
 *    result of that call is needed. Read/search = the summary's `read` tool kind, a tool name
 *    containing grep/glob/search/find/list, or a shell command starting with cat, head, tail,
 *    less, more, grep, rg, ag, find, ls, tree, nl, wc, awk or `sed -n`.
 *
 * A result is **present** in a request when the request holds a tool message with the same
 * call id and byte-identical text; cleared, masked, previewed or summarized results are not.
 * Recall at t = needed results present / needed results.
 */

/** Why a result is needed. */
export type NeedReason = 'path' | 'identifier' | 'code-line' | 'error-line' | 're-run';

/** One tool result needed by one turn. */
export interface EvidenceNeed {
  /** Index (in the recorded session) of the tool result. */
  result: number;
  reasons: NeedReason[];
  /** The specific facts the turn used from this result (path, identifier, code or error line; none for a re-run). */
  facts: string[];
}

/** Needs per turn: assistant-message index → needed results (only turns with needs appear). */
export type EvidenceNeeds = Map<number, EvidenceNeed[]>;

const PATH = /\/?(?:[\w.-]+\/)+[\w-][\w.-]*\.[A-Za-z0-9]{1,8}\b/g;
const WORD = /[A-Za-z_][A-Za-z0-9_]{5,}/g;
const CAMEL = /[a-z0-9][A-Z]/;
const SNAKE = /[A-Za-z0-9]_[A-Za-z0-9]/;
const CODE_CHARS = /[(){}[\];=]/;
const ERROR_WORDS = /error|exception|traceback|failed|failure|fatal|panic|assert/i;
const MIN_LINE = 12;

/** Evidence items of a text, as `kind:value` keys (exported for tests and the report). */
export function evidenceItems(text: string): Set<string> {
  const out = new Set<string>();
  for (const p of text.match(PATH) ?? []) out.add(`path:${p}`);
  for (const w of text.match(WORD) ?? []) if (CAMEL.test(w) || SNAKE.test(w)) out.add(`identifier:${w}`);
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.length < MIN_LINE) continue;
    if (ERROR_WORDS.test(line)) out.add(`error-line:${line}`);
    else if (CODE_CHARS.test(line)) out.add(`code-line:${line}`);
  }
  return out;
}

function strings(v: Json, out: string[]): void {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
}

/** What an assistant message says: its text plus every string inside its call arguments. */
export function assistantText(m: Message): string {
  const parts = [textOf(m.content)];
  for (const c of m.toolCalls ?? []) {
    try {
      strings(JSON.parse(c.arguments) as Json, parts);
    } catch {
      parts.push(c.arguments);
    }
    if (c.freeformInput !== undefined) parts.push(c.freeformInput);
  }
  return parts.join('\n');
}

function sortedJson(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortedJson);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortedJson(v[k])]),
    );
  return v;
}

/** `name` + canonical arguments: two calls with the same key are the same read or search. */
export function callKey(call: ToolCall): string {
  let args = call.arguments;
  try {
    args = JSON.stringify(sortedJson(JSON.parse(call.arguments) as Json));
  } catch {
    // not JSON: compared verbatim
  }
  return `${call.name}\u0000${args}\u0000${call.freeformInput ?? ''}`;
}

const READ_COMMAND =
  /^\s*(?:cd\s+\S+\s*&&\s*)?(?:cat|head|tail|less|more|grep|rg|ag|find|ls|tree|nl|wc|awk|sed\s+-n)\b/;

/** True for calls that only read or search (re-running one means its old output was wanted). */
export function isReadOrSearch(call: ToolCall): boolean {
  const args = parseArguments(call);
  const kind = toolKind(call, args);
  if (kind === 'read') return true;
  if (/grep|glob|search|find|list/i.test(call.name)) return true;
  return kind === 'shell' && READ_COMMAND.test(commandOf(call, args));
}

/**
 * Computes, for a recorded session, which earlier tool results each turn needed (see the
 * module comment for the exact rules). Linear in the session's text size.
 */
export function findEvidenceNeeds(session: readonly Message[]): EvidenceNeeds {
  const needs: EvidenceNeeds = new Map();
  const known = new Set<string>();
  const newestSource = new Map<string, number>();
  const pendingCall = new Map<string, string>(); // call id → call key, until its result arrives
  const newestResultOfCall = new Map<string, number>(); // call key → newest result index

  for (let i = 0; i < session.length; i++) {
    const m = session[i];
    if (m.role === 'tool') {
      for (const item of evidenceItems(textOf(m.content))) newestSource.set(item, i);
      const key = m.toolCallId === undefined ? undefined : pendingCall.get(m.toolCallId);
      if (key !== undefined) {
        newestResultOfCall.set(key, i);
        pendingCall.delete(m.toolCallId ?? '');
      }
      continue;
    }
    if (m.role !== 'assistant') {
      for (const item of evidenceItems(textOf(m.content))) known.add(item);
      continue;
    }
    const byResult = new Map<number, { reasons: Set<NeedReason>; facts: string[] }>();
    const add = (result: number, reason: NeedReason, fact?: string) => {
      let entry = byResult.get(result);
      if (!entry) byResult.set(result, (entry = { reasons: new Set(), facts: [] }));
      entry.reasons.add(reason);
      if (fact !== undefined) entry.facts.push(fact);
    };
    const items = evidenceItems(assistantText(m));
    for (const item of items) {
      if (known.has(item)) continue;
      const src = newestSource.get(item);
      const colon = item.indexOf(':');
      if (src !== undefined) add(src, item.slice(0, colon) as NeedReason, item.slice(colon + 1));
    }
    for (const call of m.toolCalls ?? []) {
      const key = callKey(call);
      const prev = newestResultOfCall.get(key);
      if (prev !== undefined && isReadOrSearch(call)) add(prev, 're-run');
      if (call.id) pendingCall.set(call.id, key);
    }
    for (const item of items) known.add(item);
    if (byResult.size > 0)
      needs.set(
        i,
        [...byResult.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([result, { reasons, facts }]) => ({ result, reasons: [...reasons].sort(), facts })),
      );
  }
  return needs;
}

/**
 * Index of a request's tool results by call id → texts, for {@link isPresent}. Built once
 * per request that has needs.
 */
export function indexResults(request: readonly Message[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of request) {
    if (m.role !== 'tool' || m.toolCallId === undefined) continue;
    const list = out.get(m.toolCallId);
    if (list) list.push(textOf(m.content));
    else out.set(m.toolCallId, [textOf(m.content)]);
  }
  return out;
}

/** True when `result` is in the indexed request verbatim (same call id, identical text). */
export function isPresent(result: Message, index: Map<string, string[]>): boolean {
  const texts = index.get(result.toolCallId ?? '');
  if (!texts) return false;
  const want = textOf(result.content);
  return texts.includes(want);
}
