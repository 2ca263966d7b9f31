import { hasToolCalls, textOf, type Json, type Message, type ToolCall } from '../../messages/message.js';
import { oneLine } from '../../core/text.js';
import { isSummaryMessage, summaryBody } from '../summary-message.js';
import { isCheckCommand, shellFiles, unique } from './shell.js';
import {
  commandOf,
  parseArguments,
  patchedFiles,
  pathsOfCall,
  readResult,
  toolKind,
  type CallStatus,
} from './tool-calls.js';

/**
 * Facts the offline summarizer extracts from a fork (§14): the goal, user restrictions,
 * every command with its exit code and status, files read and modified, errors, pending
 * approvals and session ids, and the latest plan. Only user messages, tool results and
 * exit codes count as evidence; assistant text appears only as the (unverified) plan.
 */

/** One distinct command (repeats are folded: repeated exploration is compressed). */
export interface CommandFact {
  command: string;
  tool: string;
  /** How many times it ran. */
  runs: number;
  /** Status and exit code of the latest run. */
  status: CallStatus;
  exitCode: number | null;
  /** Exit code of the latest failing run, when any run failed. */
  failedExitCode: number | null;
  everFailed: boolean;
  isCheck: boolean;
  /** First error line of the latest failing run. */
  errorLine?: string;
  /** Message index of the latest run (recency). */
  last: number;
}

/** A failed non-shell tool call (a rejected write, an unreadable path …). */
export interface ToolFailure {
  tool: string;
  target: string;
  message: string;
  last: number;
}

/** A counted, de-duplicated fact line. */
export interface CountedLine {
  text: string;
  count: number;
  last: number;
}

/** Everything {@link extractSessionFacts} finds. */
export interface SessionFacts {
  goal: string;
  laterRequests: CountedLine[];
  restrictions: CountedLine[];
  commands: CommandFact[];
  toolFailures: ToolFailure[];
  filesRead: CountedLine[];
  filesModified: CountedLine[];
  errors: CountedLine[];
  pending: CountedLine[];
  plan: string[];
  lastAssistantNote?: string;
  /** Sections of an earlier Compactor summary found in the fork, carried forward. */
  carried: Map<string, string[]>;
}

const RESTRICTION =
  /\b(?:don't|do not|never|only|must|mustn't|must not|always|should not|shouldn't|avoid|without|make sure|no need to|not allowed|forbidden|prohibited)\b/i;

function note(map: Map<string, CountedLine>, text: string, index: number): void {
  const hit = map.get(text);
  if (hit) {
    hit.count++;
    hit.last = index;
  } else map.set(text, { text, count: 1, last: index });
}

/** Sentences of a user message that state a restriction or preference. */
export function restrictionSentences(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/(?<=[.!?])\s+|\n+/)) {
    const s = raw.trim().replace(/^[-*#>\s]+/, '');
    if (s.length >= 6 && s.length <= 400 && RESTRICTION.test(s)) out.push(s);
  }
  return out;
}

const EXCEPTION_LINE = /^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b:?.*)$/;
const ERROR_LINE =
  /^\s*(?:(?:error|fatal|panic|FAILED|FAIL|ERROR|E\s{2,})\b.*|.*\berror(?: TS\d+)?:.*|.*: command not found.*|.*No such file or directory.*|.*<tool_use_error>.*)$/;

/**
 * Error lines of a tool output: the final exception line of each Python traceback
 * anywhere, plus (for failed results) lines that look like compiler, test or shell errors.
 */
export function errorLines(text: string, failed: boolean): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && out.length < 8; i++) {
    if (lines[i].startsWith('Traceback (most recent call last)')) {
      let j = i + 1;
      while (j < lines.length && (/^\s/.test(lines[j]) || lines[j].trim() === '')) j++;
      if (j < lines.length && EXCEPTION_LINE.test(lines[j])) out.push(lines[j].trim());
      i = j;
      continue;
    }
    if (failed && (ERROR_LINE.test(lines[i]) || EXCEPTION_LINE.test(lines[i]))) out.push(lines[i].trim());
  }
  return unique(out.map((l) => oneLine(l.replace(/<\/?tool_use_error>/g, ''), 240)).filter((l) => l !== ''));
}

/** Sections of a Compactor summary message, by heading. */
export function parseSummarySections(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const h = /^##\s+(.+?)\s*$/.exec(line);
    if (h) {
      current = [];
      out.set(h[1], current);
    } else if (current && line.trim() !== '' && !/^-\s*\(none\)$/.test(line.trim())) current.push(line);
  }
  return out;
}

interface OpenCall {
  call: ToolCall;
  index: number;
  args: Record<string, Json>;
}

/** Walks the fork once and gathers the facts (deterministic: insertion order only). */
export function extractSessionFacts(messages: readonly Message[]): SessionFacts {
  const restrictions = new Map<string, CountedLine>();
  const laterRequests = new Map<string, CountedLine>();
  const filesRead = new Map<string, CountedLine>();
  const filesModified = new Map<string, CountedLine>();
  const errors = new Map<string, CountedLine>();
  const pending = new Map<string, CountedLine>();
  const commands = new Map<string, CommandFact>();
  const toolFailures: ToolFailure[] = [];
  const carried = new Map<string, string[]>();
  const sessions = new Map<string, { command: string; open: boolean; index: number }>();
  let goal = '';
  let plan: string[] = [];
  let lastAssistantNote: string | undefined;
  let currentFile: string | undefined;

  // Calls by id, newest last, so a result binds to the latest earlier unanswered call (N1).
  const open = new Map<string, OpenCall[]>();
  const answered = new Set<OpenCall>();
  const calls: OpenCall[] = [];
  const resultOf = new Map<OpenCall, Message>();

  messages.forEach((m, index) => {
    const text = textOf(m.content);
    if (m.role === 'user' && m.toolCallId === undefined) {
      // An earlier Compactor summary (flat, abstract or detail band) is carried forward.
      if (isSummaryMessage(m)) {
        for (const [k, v] of parseSummarySections(summaryBody(m)))
          carried.set(k, [...(carried.get(k) ?? []), ...v]);
        return;
      }
      const trimmed = text.trim();
      if (trimmed === '' || /^<command-(?:message|name)>/.test(trimmed)) return;
      if (goal === '') goal = trimmed;
      else note(laterRequests, oneLine(trimmed, 300), index);
      for (const s of restrictionSentences(trimmed)) note(restrictions, s, index);
      return;
    }
    if (m.role === 'assistant') {
      if (text.trim() !== '') lastAssistantNote = text.trim();
      if (hasToolCalls(m))
        for (const call of m.toolCalls) {
          const oc = { call, index, args: parseArguments(call) };
          calls.push(oc);
          open.set(call.id, [...(open.get(call.id) ?? []), oc]);
        }
      for (const f of aiderEdits(text)) note(filesModified, f, index);
      return;
    }
    if (m.role === 'tool' && m.toolCallId !== undefined) {
      const candidates = open.get(m.toolCallId) ?? [];
      for (let k = candidates.length - 1; k >= 0; k--)
        if (!answered.has(candidates[k])) {
          answered.add(candidates[k]);
          resultOf.set(candidates[k], m);
          break;
        }
    }
  });

  const lastCallIndex = calls.length > 0 ? calls[calls.length - 1].index : -1;
  for (const oc of calls) {
    const { call, args, index } = oc;
    const result = resultOf.get(oc);
    const out = result ? textOf(result.content) : '';
    const reading = readResult(result, out);
    const kind = toolKind(call, args);
    const failed = reading.status === 'failed';
    for (const e of errorLines(out, failed)) note(errors, e, index);
    for (const f of out.matchAll(/^Applied edit to (.+)$/gm)) note(filesModified, f[1].trim(), index);
    if (result === undefined && index === lastCallIndex)
      note(pending, `awaiting result or approval: ${call.name} ${describeCall(call, args, kind)}`, index);
    if (reading.sessionId && kind !== 'poll') {
      sessions.set(reading.sessionId, { command: describeCall(call, args, kind), open: true, index });
    }
    if (
      result &&
      /\b(?:approval|approve|permission|confirm)\b/i.test(out) &&
      /\b(?:waiting|required|requires|pending|needs?)\b/i.test(out)
    )
      note(pending, `approval requested by ${call.name}: ${oneLine(out, 200)}`, index);

    if (kind === 'shell') {
      const command = commandOf(call, args);
      const files = shellFiles(command, currentFile);
      if (files.open) currentFile = files.open;
      if (!failed && reading.status !== 'not-run') {
        for (const f of files.read) note(filesRead, f, index);
        for (const f of files.modified) note(filesModified, f, index);
      }
      // `git diff` output names files that really are modified in the working tree.
      if (/\bgit\s+(?:diff|show)\b/.test(command))
        for (const f of patchedFiles(out)) note(filesModified, f, index);
      const key = command.trim();
      const prev = commands.get(key);
      const errorLine = failed ? (errorLines(out, true)[0] ?? firstLine(out)) : undefined;
      commands.set(key, {
        command: key,
        tool: call.name,
        runs: (prev?.runs ?? 0) + 1,
        status: reading.status,
        exitCode: reading.exitCode,
        failedExitCode: failed ? reading.exitCode : (prev?.failedExitCode ?? null),
        everFailed: failed || (prev?.everFailed ?? false),
        isCheck: isCheckCommand(key),
        ...(errorLine !== undefined ? { errorLine } : prev?.errorLine ? { errorLine: prev.errorLine } : {}),
        last: index,
      });
    } else if (kind === 'read' || kind === 'write') {
      const paths = pathsOfCall(call, args);
      if (kind === 'read' && paths[0]) currentFile = paths[0];
      if (failed)
        toolFailures.push({
          tool: call.name,
          target: paths.join(', ') || oneLine(call.arguments, 120),
          message: errorLines(out, true)[0] ?? firstLine(out),
          last: index,
        });
      else if (reading.status === 'completed')
        for (const p of paths) note(kind === 'read' ? filesRead : filesModified, p, index);
      else if (reading.status === 'not-run')
        note(pending, `not applied: ${call.name} ${paths.join(', ')}`.trim(), index);
    } else if (kind === 'poll') {
      const id =
        typeof args.bash_id === 'string'
          ? args.bash_id
          : typeof args.shell_id === 'string'
            ? args.shell_id
            : '';
      const s = sessions.get(id);
      if (s && /<status>(?:completed|failed|killed)<\/status>|exit code/i.test(out)) s.open = false;
    } else if (kind === 'kill') {
      const id = String(args.shell_id ?? args.bash_id ?? args.id ?? '');
      const s = sessions.get(id);
      if (s) s.open = false;
    } else if (kind === 'plan') {
      plan = planItems(args);
    } else if (failed)
      toolFailures.push({
        tool: call.name,
        target: oneLine(call.arguments, 120),
        message: errorLines(out, true)[0] ?? firstLine(out),
        last: index,
      });
  }
  for (const [id, s] of sessions)
    if (s.open)
      note(
        pending,
        `session ${id} still running (${s.command}); poll it for output before relying on it`,
        s.index,
      );

  return {
    goal,
    laterRequests: [...laterRequests.values()],
    restrictions: [...restrictions.values()],
    commands: [...commands.values()],
    toolFailures,
    filesRead: [...filesRead.values()],
    filesModified: [...filesModified.values()],
    errors: [...errors.values()],
    pending: [...pending.values()],
    plan,
    ...(lastAssistantNote !== undefined ? { lastAssistantNote } : {}),
    carried,
  };
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '(no output)';
  return oneLine(line.replace(/<\/?tool_use_error>/g, ''), 240);
}

function describeCall(call: ToolCall, args: Record<string, Json>, kind: string): string {
  if (kind === 'shell') return `\`${oneLine(commandOf(call, args), 200)}\``;
  const paths = pathsOfCall(call, args);
  return paths.length > 0 ? paths.join(', ') : oneLine(call.arguments, 120);
}

/** Todo items of a plan tool (Claude Code TodoWrite, Codex update_plan). */
function planItems(args: Record<string, Json>): string[] {
  const list = args.todos ?? args.plan ?? args.items;
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const t of list) {
    if (!t || typeof t !== 'object' || Array.isArray(t)) continue;
    const content = t.content ?? t.step ?? t.title;
    if (typeof content !== 'string') continue;
    out.push(`[${typeof t.status === 'string' ? t.status : 'pending'}] ${oneLine(content, 200)}`);
  }
  return out;
}

/** Files named by aider SEARCH/REPLACE blocks or "Applied edit to" lines. */
function aiderEdits(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^([^\s`<>=][^\n`]*?)\n```[^\n]*\n<<<<<<< SEARCH/gm)) out.push(m[1].trim());
  for (const m of text.matchAll(/^Applied edit to (.+)$/gm)) out.push(m[1].trim());
  return out;
}
