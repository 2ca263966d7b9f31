import type { Json, Message, ToolCall } from '../../messages/message.js';

/**
 * Reading tool calls and results the way agents record them (Claude Code, OpenHands,
 * SWE-agent, mini-swe-agent, Codex, Gemini CLI, aider as imported by src/formats): what
 * kind of tool it is, which command or path it names, and what its result says about exit
 * status.
 */

/** What a call does, as far as the summary cares. */
export type ToolKind = 'shell' | 'read' | 'write' | 'poll' | 'kill' | 'plan' | 'other';

/** A call's parsed arguments (`{}` when they are not a JSON object). */
export function parseArguments(call: ToolCall): Record<string, Json> {
  try {
    const v = JSON.parse(call.arguments) as Json;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function str(v: Json | undefined): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

const EDITOR = /str_replace|edit|write|create|insert|patch|replace|notebookedit/i;
const READER =
  /^(?:read|read_file|readfile|view|view_file|open|open_file|cat|notebookread|get_file|file_read|read_many_files)$/i;
const SHELL =
  /^(?:bash|sh|shell|zsh|exec|exec_command|execute_bash|execute_command|run|run_command|run_shell_command|shell_command|local_shell|terminal|cmd|container\.exec)$/i;
const READ_ACTIONS = new Set(['view', 'read', 'open', 'show']);

/** Classifies a call by tool name and arguments. */
export function toolKind(call: ToolCall, args: Record<string, Json>): ToolKind {
  const name = call.name;
  if (/^(?:bashoutput|get_output|poll|read_output|write_stdin)$/i.test(name) || str(args.bash_id))
    return 'poll';
  if (/^(?:killbash|killshell|kill_shell|kill)$/i.test(name)) return 'kill';
  if (/^(?:todowrite|update_plan|todo_write|plan)$/i.test(name)) return 'plan';
  const action = str(args.command);
  if (EDITOR.test(name) && !SHELL.test(name)) {
    if (action && READ_ACTIONS.has(action)) return 'read';
    return 'write';
  }
  if (READER.test(name)) return 'read';
  if (
    SHELL.test(name) ||
    typeof args.command === 'string' ||
    typeof args.cmd === 'string' ||
    Array.isArray(args.command)
  )
    return 'shell';
  if (call.freeformInput !== undefined && /patch/i.test(name)) return 'write';
  return 'other';
}

/** The command line of a shell call, exactly as sent. */
export function commandOf(call: ToolCall, args: Record<string, Json>): string {
  const c = args.command ?? args.cmd;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    const words = c.filter((w): w is string => typeof w === 'string');
    // Codex sends ["bash", "-lc", "<script>"]: the script is the command.
    if (words.length === 3 && /^(?:ba|z)?sh$/.test(words[0]) && /^-\w*c$/.test(words[1])) return words[2];
    return words.join(' ');
  }
  return call.freeformInput ?? call.arguments;
}

const PATH_KEYS = [
  'file_path',
  'path',
  'filePath',
  'filename',
  'file',
  'target_file',
  'notebook_path',
  'absolute_path',
];

/** Paths a read or write call names in its arguments (including patch headers). */
export function pathsOfCall(call: ToolCall, args: Record<string, Json>): string[] {
  const out: string[] = [];
  for (const k of PATH_KEYS) {
    const v = str(args[k]);
    if (v) out.push(v);
  }
  if (Array.isArray(args.paths)) for (const p of args.paths) if (typeof p === 'string') out.push(p);
  if (Array.isArray(args.edits) && str(args.file_path) === undefined)
    for (const e of args.edits)
      if (e && typeof e === 'object' && !Array.isArray(e) && typeof e.file_path === 'string')
        out.push(e.file_path);
  const patchText = [str(args.patch), str(args.input), call.freeformInput]
    .filter((s) => s !== undefined)
    .join('\n');
  if (patchText) out.push(...patchedFiles(patchText));
  return [...new Set(out)];
}

/** Files named by diff or patch headers (`+++ b/x`, `diff --git`, `*** Update File: x`). */
export function patchedFiles(text: string): string[] {
  const out: string[] = [];
  const re =
    /^(?:\*\*\* (?:Update|Add|Delete) File: (.+)|\+\+\+ (?:b\/)?(.+?)(?:\t.*)?|diff --git a\/\S+ b\/(\S+))$/gm;
  for (const m of text.matchAll(re)) {
    const p = (m[1] ?? m[2] ?? m[3] ?? '').trim();
    if (p && p !== '/dev/null') out.push(p);
  }
  return [...new Set(out)];
}

/** Outcome of one call as its result reports it. */
export type CallStatus = 'completed' | 'failed' | 'running' | 'not-run';

/** What a result says: status, exit code when one was observed, and a session id to poll. */
export interface ResultReading {
  status: CallStatus;
  exitCode: number | null;
  sessionId?: string;
}

const EXIT_PATTERNS = [
  /<returncode>(-?\d+)<\/returncode>/,
  /\[Command finished with exit code (-?\d+)\]/i,
  /\bexit(?:ed with)? code[:\s]+(-?\d+)/i,
  /\bexit status[:\s]+(-?\d+)/i,
  /\bprocess exited with code (-?\d+)/i,
];
const NOT_RUN =
  /^(?:\[?request interrupted|the user doesn't want to proceed|user (?:rejected|denied|declined)|permission denied by user|canceled:|cancelled:|aborted by user)/i;
const BACKGROUND =
  /running in (?:the )?background with ID:\s*([\w.-]+)|\b(?:shell|session|bash|process)[_ ]?id[:=]\s*["']?([\w.-]+)/i;

/** Reads status and exit code from a result's metadata (importers put them there) and text. */
export function readResult(result: Message | undefined, text: string): ResultReading {
  if (!result) return { status: 'not-run', exitCode: null };
  const meta = result.metadata ?? {};
  const bg = BACKGROUND.exec(text.slice(0, 2000));
  const sessionId = bg ? (bg[1] ?? bg[2]) : undefined;
  const withSession = (r: ResultReading): ResultReading => (sessionId ? { ...r, sessionId } : r);
  let exitCode: number | null = null;
  for (const k of ['exitCode', 'exit_code', 'returncode', 'returnCode'])
    if (typeof meta[k] === 'number') exitCode = meta[k] as number;
  if (exitCode === null)
    for (const re of EXIT_PATTERNS) {
      const m = re.exec(text.slice(0, 400)) ?? re.exec(text.slice(-400));
      if (m) {
        exitCode = Number(m[1]);
        break;
      }
    }
  const head = text.trimStart();
  if (NOT_RUN.test(head)) return withSession({ status: 'not-run', exitCode });
  // OpenHands reports -1 while a process is still going.
  if (
    exitCode === -1 ||
    /process is not yet finished|still running|<status>running<\/status>/i.test(text.slice(-600))
  )
    return withSession({ status: 'running', exitCode });
  if (sessionId && /running in (?:the )?background/i.test(text))
    return withSession({ status: 'running', exitCode });
  if (exitCode !== null) return withSession({ status: exitCode === 0 ? 'completed' : 'failed', exitCode });
  const isError = meta.isError ?? meta.is_error;
  if (typeof isError === 'boolean')
    return withSession({ status: isError ? 'failed' : 'completed', exitCode });
  if (/^(?:<tool_use_error>|error\b|fatal:|traceback \(most recent call last\))/i.test(head))
    return withSession({ status: 'failed', exitCode });
  return withSession({ status: 'completed', exitCode });
}
