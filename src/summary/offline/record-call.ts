import type { Json, Message, ToolCall } from '../../messages/message.js';
import { oneLine } from '../../core/text.js';
import { errorLines, firstLine } from './error-lines.js';
import { note, type FactLog } from './facts.js';
import { planItems } from './plan-edits.js';
import { isCheckCommand, shellFiles } from './shell.js';
import {
  commandOf,
  patchedFiles,
  pathsOfCall,
  readResult,
  toolKind,
  type ResultReading,
  type ToolKind,
} from './tool-calls.js';

/** One tool call of the fork with its position and parsed arguments. */
export interface ForkCall {
  call: ToolCall;
  index: number;
  args: Record<string, Json>;
}

/** What the summary shows for a call: its command in backticks, or the paths it names. */
export function describeCall(call: ToolCall, args: Record<string, Json>, kind: ToolKind): string {
  if (kind === 'shell') return `\`${oneLine(commandOf(call, args), 200)}\``;
  const paths = pathsOfCall(call, args);
  return paths.length > 0 ? paths.join(', ') : oneLine(call.arguments, 120);
}

function recordShell(log: FactLog, fc: ForkCall, reading: ResultReading, out: string): void {
  const { call, args, index } = fc;
  const failed = reading.status === 'failed';
  const command = commandOf(call, args);
  const files = shellFiles(command, log.currentFile);
  if (files.open) log.currentFile = files.open;
  if (!failed && reading.status !== 'not-run') {
    for (const f of files.read) note(log.filesRead, f, index);
    for (const f of files.modified) note(log.filesModified, f, index);
  }
  // `git diff` output names files that really are modified in the working tree.
  if (/\bgit\s+(?:diff|show)\b/.test(command))
    for (const f of patchedFiles(out)) note(log.filesModified, f, index);
  const key = command.trim();
  const prev = log.commands.get(key);
  const errorLine = failed ? (errorLines(out, true)[0] ?? firstLine(out)) : prev?.errorLine;
  log.commands.set(key, {
    command: key,
    tool: call.name,
    runs: (prev?.runs ?? 0) + 1,
    status: reading.status,
    exitCode: reading.exitCode,
    failedExitCode: failed ? reading.exitCode : (prev?.failedExitCode ?? null),
    everFailed: failed || (prev?.everFailed ?? false),
    isCheck: isCheckCommand(key),
    ...(errorLine !== undefined ? { errorLine } : {}),
    last: index,
  });
}

function recordFailure(log: FactLog, fc: ForkCall, target: string, out: string): void {
  log.toolFailures.push({
    tool: fc.call.name,
    target,
    message: errorLines(out, true)[0] ?? firstLine(out),
    last: fc.index,
  });
}

function recordFileCall(
  log: FactLog,
  fc: ForkCall,
  kind: ToolKind,
  reading: ResultReading,
  out: string,
): void {
  const paths = pathsOfCall(fc.call, fc.args);
  if (kind === 'read' && paths[0]) log.currentFile = paths[0];
  if (reading.status === 'failed')
    recordFailure(log, fc, paths.join(', ') || oneLine(fc.call.arguments, 120), out);
  else if (reading.status === 'completed')
    for (const p of paths) note(kind === 'read' ? log.filesRead : log.filesModified, p, fc.index);
  else if (reading.status === 'not-run')
    note(log.pending, `not applied: ${fc.call.name} ${paths.join(', ')}`.trim(), fc.index);
}

function closeSession(log: FactLog, args: Record<string, Json>, out: string | null): void {
  const id = String(args.bash_id ?? args.shell_id ?? (out === null ? (args.id ?? '') : ''));
  const s = log.sessions.get(id);
  // A poll closes the session only when its output reports an end; a kill always does.
  if (s && (out === null || /<status>(?:completed|failed|killed)<\/status>|exit code/i.test(out)))
    s.open = false;
}

function recordApprovals(
  log: FactLog,
  fc: ForkCall,
  kind: ToolKind,
  result: Message | undefined,
  out: string,
  reading: ResultReading,
): void {
  if (reading.sessionId && kind !== 'poll')
    log.sessions.set(reading.sessionId, {
      command: describeCall(fc.call, fc.args, kind),
      open: true,
      index: fc.index,
    });
  if (
    result &&
    /\b(?:approval|approve|permission|confirm)\b/i.test(out) &&
    /\b(?:waiting|required|requires|pending|needs?)\b/i.test(out)
  )
    note(log.pending, `approval requested by ${fc.call.name}: ${oneLine(out, 200)}`, fc.index);
}

/**
 * Records one call and its result (or its absence: `isLast` marks the fork's last call,
 * whose missing result means it still awaits a result or an approval).
 */
export function recordCall(
  log: FactLog,
  fc: ForkCall,
  result: Message | undefined,
  out: string,
  isLast: boolean,
): void {
  const { call, args, index } = fc;
  const reading = readResult(result, out);
  const kind = toolKind(call, args);
  for (const e of errorLines(out, reading.status === 'failed')) note(log.errors, e, index);
  for (const f of out.matchAll(/^Applied edit to (.+)$/gm)) note(log.filesModified, f[1].trim(), index);
  if (result === undefined && isLast)
    note(log.pending, `awaiting result or approval: ${call.name} ${describeCall(call, args, kind)}`, index);
  recordApprovals(log, fc, kind, result, out, reading);
  if (kind === 'shell') recordShell(log, fc, reading, out);
  else if (kind === 'read' || kind === 'write') recordFileCall(log, fc, kind, reading, out);
  else if (kind === 'poll') closeSession(log, args, out);
  else if (kind === 'kill') closeSession(log, args, null);
  else if (kind === 'plan') log.plan = planItems(args);
  else if (reading.status === 'failed') recordFailure(log, fc, oneLine(call.arguments, 120), out);
}
