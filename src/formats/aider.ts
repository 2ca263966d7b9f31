import type { Message, ToolCall } from '../messages/message.js';
import { inputError, placeOf } from './input-error.js';
import { sessionIdFrom } from './swe-agent.js';
import type { ImportedSession, ImportResult, SessionFormat } from './types.js';

/**
 * aider chat history markdown. `#### ` lines are user input, `> ` lines are
 * tool/system output, everything else is the assistant reply. aider has no call ids, so
 * each output block gets a synthetic call (`aider-<n>`): attached to the assistant reply
 * it follows, else to an empty synthetic assistant message (`metadata.synthetic`).
 */
const STARTED = /^# aider chat started at (.+?)\s*$/;
const USER = /^####(?: (.*?))?\s*$/;
const OUTPUT = /^>(?: (.*?))?\s*$/;
const DIV_OPEN = /^<div class="chat-transcript"/;
const DIV_CLOSE = /^<\/div>\s*$/;

type Kind = 'user' | 'output' | 'assistant';

interface Segment {
  kind: Kind;
  lines: string[];
}

/** Splits one chat's lines into user / output / assistant segments (fenced code stays assistant). */
function segments(lines: readonly string[], wrapped: boolean): Segment[] {
  const out: Segment[] = [];
  let cur: Segment | undefined;
  let inFence = false;
  let inTranscript = !wrapped;
  const push = (kind: Kind, text: string) => {
    if (!cur || cur.kind !== kind) out.push((cur = { kind, lines: [] }));
    cur.lines.push(text);
  };
  for (const line of lines) {
    if (wrapped && !inFence) {
      if (DIV_OPEN.test(line)) {
        inTranscript = true;
        continue;
      }
      if (DIV_CLOSE.test(line)) {
        inTranscript = false;
        continue;
      }
    }
    if (!inTranscript) continue;
    if (inFence) {
      push('assistant', line);
      if (line.startsWith('```')) inFence = false;
      continue;
    }
    const u = USER.exec(line);
    if (u) {
      push('user', u[1] ?? '');
      continue;
    }
    const o = OUTPUT.exec(line);
    if (o) {
      push('output', o[1] ?? '');
      continue;
    }
    if (line.trim() === '') {
      cur?.lines.push('');
      continue;
    }
    push('assistant', line);
    if (line.startsWith('```')) inFence = true;
  }
  return out;
}

function joinTrim(lines: readonly string[]): string {
  return lines.join('\n').replace(/^\n+|\s+$/g, '');
}

/** The synthetic call for an output block: `run` after /run or /test, `shell` for confirmed commands, else `aider`. */
function callFor(output: string, lastUser: string | undefined, id: string): ToolCall {
  const run = lastUser !== undefined ? /^\/(?:run|test)\s+(.*)$/s.exec(lastUser) : null;
  if (run) return { id, name: 'run', arguments: JSON.stringify({ command: run[1].trim() }) };
  const commands = [...output.matchAll(/^Running (.+)$/gm)].map((m) => m[1]);
  if (commands.length > 0) return { id, name: 'shell', arguments: JSON.stringify({ commands }) };
  return { id, name: 'aider', arguments: '{}' };
}

function chatMessages(lines: readonly string[], wrapped: boolean, counter: { n: number }): Message[] {
  const messages: Message[] = [];
  let lastUser: string | undefined;
  let userSinceAssistant = false;
  for (const seg of segments(lines, wrapped)) {
    const text = joinTrim(seg.lines);
    if (seg.kind === 'user') {
      messages.push({ role: 'user', content: text });
      lastUser = text;
      userSinceAssistant = true;
    } else if (seg.kind === 'assistant') {
      if (text === '') continue;
      messages.push({ role: 'assistant', content: text });
      userSinceAssistant = false;
    } else {
      const call = callFor(text, userSinceAssistant ? lastUser : undefined, `aider-${++counter.n}`);
      const last = messages[messages.length - 1];
      if (last && last.role === 'assistant' && !last.toolCalls && call.name !== 'run')
        last.toolCalls = [call];
      else
        messages.push({ role: 'assistant', content: '', toolCalls: [call], metadata: { synthetic: true } });
      messages.push({ role: 'tool', content: text, toolCallId: call.id, toolName: call.name });
      userSinceAssistant = false;
    }
  }
  return messages;
}

function chatMeta(lines: readonly string[]): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  for (const l of lines) {
    const model = /^> Main model: (\S+)/.exec(l);
    if (model && meta.model === undefined) meta.model = model[1];
    const version = /^> Aider v(\S+)/.exec(l);
    if (version && meta.aiderVersion === undefined) meta.aiderVersion = version[1].replace(/\s+$/, '');
  }
  return meta;
}

/** Imports aider chat markdown: one session per `# aider chat started` section (or one for a website example). */
export function importAider(text: string, fileName?: string): ImportResult {
  const lines = text.split(/\r?\n/);
  const wrapped = lines.some((l) => DIV_OPEN.test(l));
  const chats: Array<{ startedAt?: string; lines: string[] }> = [];
  let cur: { startedAt?: string; lines: string[] } = { lines: [] };
  for (const line of lines) {
    const s = STARTED.exec(line);
    if (s) {
      if (cur.lines.some((l) => l.trim() !== '')) chats.push(cur);
      cur = { startedAt: s[1], lines: [] };
    } else cur.lines.push(line);
  }
  if (cur.lines.some((l) => l.trim() !== '') || cur.startedAt !== undefined) chats.push(cur);
  const counter = { n: 0 };
  const base = sessionIdFrom(fileName, 'aider');
  const sessions: ImportedSession[] = [];
  for (const chat of chats) {
    const messages = chatMessages(chat.lines, wrapped, counter);
    if (messages.length === 0 && chat.startedAt === undefined) continue;
    sessions.push({
      id: chat.startedAt ? chat.startedAt.replace(' ', 'T') : base,
      messages,
      meta: { ...(chat.startedAt ? { startedAt: chat.startedAt } : {}), ...chatMeta(chat.lines) },
    });
  }
  if (sessions.length === 0)
    throw inputError(placeOf(fileName), 'no aider chat found (no "#### " user lines)');
  return { format: 'aider', file: fileName, sessions };
}

/** aider chat history: its markdown header, `####` user turns in a `.md` file, or its HTML export. */
function looksLikeAider(text: string, fileName?: string): boolean {
  const start = text.slice(0, 65536);
  if (/^# aider chat started at /m.test(start)) return true;
  if (/\.md$/i.test(fileName ?? '') && /^#### /m.test(text)) return true;
  return /<div class="chat-transcript"/.test(start) && /^#### /m.test(text);
}

/** aider's markdown chat history. */
export const aiderFormat: SessionFormat<'aider'> = {
  name: 'aider',
  detect: [{ kind: 'text', order: 10, test: looksLikeAider }],
  import: importAider,
};
