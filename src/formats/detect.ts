import { inputError, placeOf } from './input-error.js';
import { firstLines, parseJson, tryParseJson } from './json-text.js';
import type { FormatName } from './types.js';

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
const CLAUDE_LINE_TYPES = new Set([
  'user',
  'assistant',
  'summary',
  'file-history-snapshot',
  'system',
  'queue-operation',
]);
const GEMINI_EVENT_TYPES = new Set(['init', 'message', 'tool_use', 'tool_result', 'result']);
const CODEX_LINE_TYPES = new Set(['session_meta', 'turn_context', 'response_item', 'event_msg', 'compacted']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function hasAnthropicBlocks(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isObj(m) &&
      Array.isArray(m.content) &&
      m.content.some((b) => isObj(b) && (ANTHROPIC_BLOCK_TYPES.has(String(b.type)) || isObj(b.source))),
  );
}

/** Chat vs Anthropic for a list of `{role, content}` messages. */
function messagesFormat(messages: unknown[], doc?: Obj): FormatName {
  if (
    doc &&
    ('system' in doc || 'max_tokens' in doc) &&
    !messages.some((m) => isObj(m) && m.role === 'system')
  )
    return 'anthropic';
  return hasAnthropicBlocks(messages) ? 'anthropic' : 'openai-chat';
}

function isResponsesItem(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (typeof v.type === 'string') return RESPONSES_ITEM_TYPES.has(v.type) || !('role' in v);
  return false;
}

/** The format of a parsed JSON document, when its shape is a known one. */
export function fromJsonDocument(doc: unknown): FormatName | undefined {
  if (Array.isArray(doc)) {
    if (doc.length === 0) return 'openai-chat';
    if (doc.some(isResponsesItem)) return 'openai-responses';
    if (doc.every((m) => isObj(m) && typeof m.role === 'string')) return messagesFormat(doc);
    return undefined;
  }
  if (!isObj(doc)) return undefined;
  if (doc.format === 'compactor.canonical') return 'canonical';
  if (typeof doc.trajectory_format === 'string' && doc.trajectory_format.startsWith('mini-swe-agent'))
    return 'mini-swe-agent';
  if (Array.isArray(doc.history) && (Array.isArray(doc.trajectory) || 'environment' in doc))
    return 'swe-agent';
  if (Array.isArray(doc.history) && ('instance_id' in doc || 'issue' in doc || 'instruction' in doc))
    return 'openhands';
  if (Array.isArray(doc.messages)) {
    if ('info' in doc && doc.messages.some((m) => isObj(m) && 'extra' in m)) return 'mini-swe-agent';
    return messagesFormat(doc.messages, doc);
  }
  if (Array.isArray(doc.input)) return 'openai-responses';
  return undefined;
}

function fromJsonLine(v: unknown): FormatName | undefined {
  if (!isObj(v)) return undefined;
  if (Array.isArray(v.history)) return 'openhands';
  if (CODEX_LINE_TYPES.has(String(v.type)) && isObj(v.payload)) return 'codex';
  if (CLAUDE_LINE_TYPES.has(String(v.type)) && ('uuid' in v || 'sessionId' in v || 'leafUuid' in v))
    return 'claude-code';
  if (GEMINI_EVENT_TYPES.has(String(v.type)) && !('payload' in v) && !('call_id' in v)) {
    if (v.type === 'message' && !('role' in v)) return undefined;
    return 'gemini-cli';
  }
  if (typeof v.role === 'string' && !('type' in v)) return 'openai-chat';
  if (isResponsesItem(v) || (v.type === 'message' && 'role' in v)) return 'openai-responses';
  return undefined;
}

/**
 * Detects an input's format from its content (and file name as a hint). Throws a
 * one-line UserError when nothing matches.
 */
export function detectFormat(text: string, fileName?: string): FormatName {
  const where = placeOf(fileName);
  const head = text.slice(0, 4096).trimStart();
  if (head === '') throw inputError(where, 'empty input, nothing to import');
  if (
    /^# aider chat started at /m.test(text.slice(0, 65536)) ||
    (/\.md$/i.test(fileName ?? '') && /^#### /m.test(text))
  )
    return 'aider';
  if (/<div class="chat-transcript"/.test(text.slice(0, 65536)) && /^#### /m.test(text)) return 'aider';
  if (head.startsWith('[') || head.startsWith('{')) {
    const doc = tryParseJson(text);
    if (doc !== undefined) {
      const f = fromJsonDocument(doc);
      if (f) return f;
      // A one-line JSONL file parses as a single document too.
      const line = fromJsonLine(doc);
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
      const f = fromJsonLine(v);
      if (f) return f;
    }
    // Not JSON Lines either: report the document's own syntax error (line and column).
    if (!anyLine) parseJson(text, fileName);
    throw inputError(where, 'unknown format: no known session shape in the first lines (use --from FORMAT)');
  }
  throw inputError(where, 'unknown format: not JSON, JSON Lines or aider chat markdown (use --from FORMAT)');
}
