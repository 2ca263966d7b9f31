import { z } from 'zod';
import type { Json, Message } from '../messages/message.js';
import { assistantFromContent, checkContent, userFromContent } from './anthropic-blocks.js';
import { inputError, placeOf, validate } from './input-error.js';
import { parseJsonLines } from './json-text.js';
import { isObj } from './detect.js';
import type { ImportedSession, ImportResult, SessionFormat } from './types.js';

/** Claude Code transcript JSONL. */
const LineSchema = z.looseObject({ type: z.string() });
const TurnSchema = z.looseObject({
  type: z.enum(['user', 'assistant']),
  uuid: z.string(),
  parentUuid: z.string().nullish(),
  sessionId: z.string().optional(),
  timestamp: z.string().optional(),
  isSidechain: z.boolean().optional(),
  isMeta: z.boolean().optional(),
  message: z.looseObject({
    role: z.enum(['user', 'assistant']),
    content: z.unknown(),
    id: z.string().optional(),
    model: z.string().optional(),
  }),
});
type Turn = z.infer<typeof TurnSchema>;

interface Thread {
  messages: Message[];
  /** message.id → index in messages, to merge blocks of one API message written on several lines. */
  byApiId: Map<string, number>;
  /** tool_use_id → content of the first result seen, to drop duplicate copies. */
  results: Map<string, string>;
  duplicates: number;
  firstLine: number;
}

function newThread(line: number): Thread {
  return { messages: [], byApiId: new Map(), results: new Map(), duplicates: 0, firstLine: line };
}

function lineMeta(t: Turn, line: number): Record<string, Json> {
  const m: Record<string, Json> = { line, uuid: t.uuid };
  if (t.timestamp) m.timestamp = t.timestamp;
  if (t.isMeta) m.isMeta = true;
  return m;
}

function addTurn(th: Thread, t: Turn, line: number, where: string): void {
  const content = checkContent(t.message.content, where, 'message.content');
  if (t.type === 'assistant') {
    const apiId = t.message.id;
    const at = apiId !== undefined ? th.byApiId.get(apiId) : undefined;
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    if (at !== undefined) {
      // Another block of the same API message: rebuild it from all its blocks.
      const prev = th.messages[at];
      const prevBlocks = (prev.metadata?.claudeBlocks ?? []) as Json[];
      const all = [...prevBlocks, ...(blocks as Json[])];
      const merged = assistantFromContent(all as never, where, 'message.content');
      th.messages[at] = { ...merged, metadata: { ...prev.metadata, claudeBlocks: all } };
      return;
    }
    const m = assistantFromContent(blocks as never, where, 'message.content');
    const metadata: Record<string, Json> = { ...lineMeta(t, line), claudeBlocks: blocks as Json[] };
    if (apiId) metadata.messageId = apiId;
    if (t.message.model) metadata.model = t.message.model;
    th.messages.push({ ...m, metadata });
    if (apiId !== undefined) th.byApiId.set(apiId, th.messages.length - 1);
    return;
  }
  for (const m of userFromContent(content, where, 'message.content')) {
    if (m.role === 'tool') {
      const id = m.toolCallId ?? '';
      const key = JSON.stringify(m.content);
      if (th.results.get(id) === key) {
        th.duplicates++;
        continue;
      }
      th.results.set(id, key);
    }
    th.messages.push({ ...m, metadata: { ...m.metadata, ...lineMeta(t, line) } });
  }
}

/** Drops the helper block copies used while merging lines. */
function finish(th: Thread): Message[] {
  return th.messages.map((m) => {
    if (!m.metadata || !('claudeBlocks' in m.metadata)) return m;
    const { claudeBlocks: _b, ...rest } = m.metadata;
    return { ...m, metadata: rest };
  });
}

/**
 * Imports a Claude Code transcript. Blocks of one API message (same `message.id`) merge
 * into one message, so parallel tool_use lines become one batch; duplicate tool_result
 * copies are dropped; `toolUseResult` duplicates are not imported. Sidechain (subagent)
 * lines become separate sessions (`meta.sidechain: true`), one per subagent root.
 */
export function importClaudeCode(text: string, fileName?: string): ImportResult {
  const lines = parseJsonLines(text, fileName);
  if (lines.length === 0) throw inputError(placeOf(fileName), 'empty input');
  const main = newThread(0);
  const side = new Map<string, Thread>();
  const rootOf = new Map<string, string>();
  const otherTypes: Record<string, number> = {};
  let sessionId: string | undefined;
  const summaries: string[] = [];
  for (const { line, value } of lines) {
    const where = placeOf(fileName, `line ${line}`);
    const head = validate(LineSchema, value, where);
    if (head.type !== 'user' && head.type !== 'assistant') {
      otherTypes[head.type] = (otherTypes[head.type] ?? 0) + 1;
      if (head.type === 'summary' && typeof head.summary === 'string') summaries.push(head.summary);
      continue;
    }
    const t = validate(TurnSchema, value, where);
    sessionId ??= t.sessionId;
    if (!t.isSidechain) {
      addTurn(main, t, line, where);
      continue;
    }
    // A subagent's lines chain from its first prompt line; parallel subagents interleave.
    const parent = t.parentUuid ?? undefined;
    const root = (parent !== undefined ? rootOf.get(parent) : undefined) ?? t.uuid;
    rootOf.set(t.uuid, root);
    let th = side.get(root);
    if (!th) side.set(root, (th = newThread(line)));
    addTurn(th, t, line, where);
  }
  const id = sessionId ?? 'main';
  const mainMessages = finish(main);
  const sidechains = sidechainSessions(id, side, taskCallsByPrompt(mainMessages));
  const mainSession: ImportedSession = {
    id,
    messages: mainMessages,
    meta: {
      sidechain: false,
      sidechains: sidechains.map((s) => ({ id: s.id, messages: s.messages.length })),
      duplicateResultsDropped: main.duplicates,
      otherLineTypes: otherTypes,
      ...(summaries.length > 0 ? { summaries } : {}),
    },
  };
  return { format: 'claude-code', file: fileName, sessions: [mainSession, ...sidechains] };
}

/** One session per subagent, linked to the Task/Agent call whose prompt started it. */
function sidechainSessions(
  id: string,
  side: ReadonlyMap<string, Thread>,
  taskCalls: ReadonlyMap<string, string>,
): ImportedSession[] {
  return [...side.entries()].map(([root, th], k) => {
    const first = th.messages[0];
    const prompt = first && typeof first.content === 'string' ? first.content : undefined;
    return {
      id: `${id}/sidechain-${k + 1}`,
      messages: finish(th),
      meta: {
        sidechain: true,
        rootUuid: root,
        firstLine: th.firstLine,
        parentToolCallId: prompt !== undefined ? taskCalls.get(prompt) : undefined,
        duplicateResultsDropped: th.duplicates,
      },
    };
  });
}

// Task/Agent calls by their prompt, to link a sidechain to the call that started it.
function taskCallsByPrompt(messages: readonly Message[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages)
    for (const c of m.toolCalls ?? []) {
      if (c.name !== 'Task' && c.name !== 'Agent') continue;
      try {
        const input = JSON.parse(c.arguments) as { prompt?: unknown };
        if (typeof input.prompt === 'string') out.set(input.prompt, c.id);
      } catch {
        /* arguments always come from JSON.stringify here */
      }
    }
  return out;
}

const CLAUDE_LINE_TYPES = new Set([
  'user',
  'assistant',
  'summary',
  'file-history-snapshot',
  'system',
  'queue-operation',
]);

/** Claude Code transcripts: typed lines carrying a `uuid`, `sessionId` or `leafUuid`. */
export const claudeCodeFormat: SessionFormat<'claude-code'> = {
  name: 'claude-code',
  detect: [
    {
      kind: 'line',
      order: 30,
      test: (v) =>
        isObj(v) &&
        CLAUDE_LINE_TYPES.has(String(v.type)) &&
        ('uuid' in v || 'sessionId' in v || 'leafUuid' in v),
    },
  ],
  import: importClaudeCode,
};
