import { z } from 'zod';
import { RecordSchema, type Json, type Message } from '../messages/message.js';
import { inputError, placeOf, validate } from './input-error.js';
import { parseJsonLines } from './json-text.js';
import { itemsToGroups } from './openai-responses.js';
import { isObj } from './detect.js';
import type { ImportResult, SessionFormat } from './types.js';

/** OpenAI Codex CLI rollout JSONL: `{timestamp, type, payload}` per line. */
const LineSchema = z.looseObject({
  timestamp: z.string().optional(),
  type: z.string(),
  payload: RecordSchema,
});

interface PendingItem {
  value: unknown;
  where: string;
  path: string;
  timestamp?: string;
}

/** Responses items of one turn, grouped; each message carries its first item's timestamp. */
function groupedItemMessages(items: PendingItem[]): Message[] {
  const out: Message[] = [];
  let k = 0;
  for (const g of items.length === 0 ? [] : itemsToGroups(items)) {
    const ts = items[k]?.timestamp;
    k += g.raw.length;
    for (const m of g.messages) out.push(ts ? { ...m, metadata: { ...m.metadata, timestamp: ts } } : m);
  }
  return out;
}

/** Copies the session's own facts into `meta`; its base instructions become the system message. */
function readSessionMeta(p: Record<string, unknown>, meta: Record<string, unknown>): Message | undefined {
  meta.sessionId = p.id;
  meta.cwd = p.cwd;
  meta.cliVersion = p.cli_version;
  meta.originator = p.originator;
  const instructions = (p.base_instructions as { text?: unknown } | undefined)?.text;
  return typeof instructions === 'string' && instructions !== ''
    ? { role: 'system', content: instructions, metadata: { codex: 'base_instructions' } }
    : undefined;
}

/** Codex's own summary of the history it replaced, as a user message. */
function compactedMessage(p: Record<string, unknown>, timestamp: string | undefined): Message {
  const summary = typeof p.message === 'string' ? p.message : '';
  const replaced = Array.isArray(p.replacement_history) ? p.replacement_history.length : 0;
  return {
    role: 'user',
    content: summary,
    metadata: {
      codex: 'compacted',
      replacementHistoryItems: replaced,
      ...(timestamp ? { timestamp } : {}),
    },
  };
}

/**
 * Imports a Codex rollout. `response_item` payloads are Responses items (the model-visible
 * conversation) and go through the Responses grouping; `event_msg` lines are UI duplicates
 * and only lend metadata (exit codes, token usage); `compacted` becomes a user message
 * holding Codex's own summary; `session_meta.base_instructions` becomes the system message.
 */
export function importCodex(text: string, fileName?: string): ImportResult {
  const lines = parseJsonLines(text, fileName);
  if (lines.length === 0) throw inputError(placeOf(fileName), 'empty input');
  const messages: Message[] = [];
  const meta: Record<string, unknown> = {};
  const exitCodes = new Map<string, number>();
  let pendingItems: PendingItem[] = [];
  const flushItems = () => {
    messages.push(...groupedItemMessages(pendingItems));
    pendingItems = [];
  };
  for (const { line, value } of lines) {
    const where = placeOf(fileName, `line ${line}`);
    const l = validate(LineSchema, value, where);
    const p = l.payload;
    switch (l.type) {
      case 'session_meta': {
        const system = readSessionMeta(p, meta);
        if (system) messages.push(system);
        break;
      }
      case 'turn_context':
        if (meta.model === undefined && typeof p.model === 'string') meta.model = p.model;
        break;
      case 'response_item':
        pendingItems.push({ value: p, where, path: 'payload', timestamp: l.timestamp });
        break;
      case 'compacted':
        flushItems();
        messages.push(compactedMessage(p, l.timestamp));
        break;
      case 'event_msg':
        if (p.type === 'exec_command_end' && typeof p.call_id === 'string' && typeof p.exit_code === 'number')
          exitCodes.set(p.call_id, p.exit_code);
        if (p.type === 'token_count' && p.info) meta.lastTokenCount = p.info;
        break;
      default:
        break; // unknown line types are metadata of newer CLIs
    }
    // Items of one turn are grouped together; a non-item line ends the run.
    if (l.type !== 'response_item' && l.type !== 'event_msg') flushItems();
  }
  flushItems();
  const withExit = messages.map((m) => {
    const code = m.role === 'tool' && m.toolCallId ? exitCodes.get(m.toolCallId) : undefined;
    return code === undefined ? m : { ...m, metadata: { ...m.metadata, exitCode: code as Json } };
  });
  return {
    format: 'codex',
    file: fileName,
    sessions: [{ id: String(meta.sessionId ?? 'main'), messages: withExit, meta }],
  };
}

const CODEX_LINE_TYPES = new Set(['session_meta', 'turn_context', 'response_item', 'event_msg', 'compacted']);

/** Codex CLI rollouts: typed lines with a `payload`. */
export const codexFormat: SessionFormat<'codex'> = {
  name: 'codex',
  detect: [
    {
      kind: 'line',
      order: 20,
      test: (v) => isObj(v) && CODEX_LINE_TYPES.has(String(v.type)) && isObj(v.payload),
    },
  ],
  import: importCodex,
};
