import { inputError, placeOf } from './input-error.js';
import { firstLines, parseJson, tryParseJson } from './json-text.js';

/**
 * Format detection from content. Each importer lists its own detection rules beside its parser
 * (the `detect` of its {@link SessionFormat}); this file runs them and holds the shape checks
 * that more than one format's rules read. Rules of one kind run across all formats in
 * ascending `order`; the first that matches names the format.
 */

/** One way an importer recognises its input. */
export type DetectionRule =
  /** The raw text (and file name), checked before any JSON parse. */
  | { kind: 'text'; order: number; test: (text: string, fileName?: string) => boolean }
  /** A whole JSON document. */
  | { kind: 'document'; order: number; test: (doc: unknown) => boolean }
  /** One line of JSON Lines (the first 20 are tried, in file order). */
  | { kind: 'line'; order: number; test: (value: unknown) => boolean };

/** What detection needs of a format: its name and its rules. */
export interface Detectable<N extends string = string> {
  name: N;
  detect: readonly DetectionRule[];
}

type Obj = Record<string, unknown>;

/** A JSON object (not null, not an array). */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const RESPONSES_ITEM_TYPES = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'reasoning',
  'compaction',
  'item_reference',
  'web_search_call',
]);
const ANTHROPIC_BLOCK_TYPES = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'compaction',
]);

/** An OpenAI Responses item: a known item type, or any typed value without a role. */
export function isResponsesItem(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (typeof v.type === 'string') return RESPONSES_ITEM_TYPES.has(v.type) || !('role' in v);
  return false;
}

function hasAnthropicBlocks(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isObj(m) &&
      Array.isArray(m.content) &&
      m.content.some((b) => isObj(b) && (ANTHROPIC_BLOCK_TYPES.has(String(b.type)) || isObj(b.source))),
  );
}

/** Chat vs Anthropic for a list of `{role, content}` messages. */
function messagesFormat(messages: unknown[], doc?: Obj): 'anthropic' | 'openai-chat' {
  if (
    doc &&
    ('system' in doc || 'max_tokens' in doc) &&
    !messages.some((m) => isObj(m) && m.role === 'system')
  )
    return 'anthropic';
  return hasAnthropicBlocks(messages) ? 'anthropic' : 'openai-chat';
}

/**
 * For a document of `{role, content}` messages (a bare list, or a request with `messages`):
 * whether it reads as Chat Completions or Anthropic Messages; undefined for other documents.
 */
export function messagesDocumentFormat(doc: unknown): 'anthropic' | 'openai-chat' | undefined {
  if (Array.isArray(doc)) {
    if (doc.length === 0) return 'openai-chat';
    return doc.every((m) => isObj(m) && typeof m.role === 'string') ? messagesFormat(doc) : undefined;
  }
  return isObj(doc) && Array.isArray(doc.messages) ? messagesFormat(doc.messages, doc) : undefined;
}

/** The rules of one kind across `formats`, in the order they run. */
function rulesOf<K extends DetectionRule['kind']>(formats: readonly Detectable[], kind: K) {
  return formats
    .flatMap((f) => f.detect.filter((r) => r.kind === kind).map((rule) => ({ name: f.name, rule })))
    .sort((a, b) => a.rule.order - b.rule.order) as {
    name: string;
    rule: Extract<DetectionRule, { kind: K }>;
  }[];
}

/** The format of a parsed JSON document, when one of `formats` knows its shape. */
export function documentFormatIn(formats: readonly Detectable[], doc: unknown): string | undefined {
  return rulesOf(formats, 'document').find(({ rule }) => rule.test(doc))?.name;
}

function lineFormatIn(formats: readonly Detectable[], value: unknown): string | undefined {
  return rulesOf(formats, 'line').find(({ rule }) => rule.test(value))?.name;
}

/**
 * Detects an input's format among `formats` from its content (and file name as a hint).
 * Throws a one-line UserError when nothing matches.
 */
export function detectIn(formats: readonly Detectable[], text: string, fileName?: string): string {
  const where = placeOf(fileName);
  const head = text.slice(0, 4096).trimStart();
  if (head === '') throw inputError(where, 'empty input, nothing to import');
  const byText = rulesOf(formats, 'text').find(({ rule }) => rule.test(text, fileName));
  if (byText) return byText.name;
  if (head.startsWith('[') || head.startsWith('{')) {
    const doc = tryParseJson(text);
    if (doc !== undefined) {
      const f = documentFormatIn(formats, doc);
      if (f) return f;
      // A one-line JSONL file parses as a single document too.
      const line = lineFormatIn(formats, doc);
      if (line) return line;
      throw inputError(
        where,
        'unknown format: a JSON document with no known session shape (use --from FORMAT)',
      );
    }
    let anyLine = false;
    for (const l of firstLines(text, 20)) {
      const v = tryParseJson(l);
      if (v === undefined) continue;
      anyLine = true;
      const f = lineFormatIn(formats, v);
      if (f) return f;
    }
    // Not JSON Lines either: report the document's own syntax error (line and column).
    if (!anyLine) parseJson(text, fileName);
    throw inputError(where, 'unknown format: no known session shape in the first lines (use --from FORMAT)');
  }
  throw inputError(where, 'unknown format: not JSON, JSON Lines or aider chat markdown (use --from FORMAT)');
}
