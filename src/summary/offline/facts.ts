import type { SourceFacts } from './output-facts.js';
import type { CallStatus } from './tool-calls.js';

/**
 * Facts the offline summarizer extracts from a fork: the goal, user restrictions,
 * every command with its exit code and status, files read and modified, errors, pending
 * approvals and session ids, the latest plan, and the key facts of tool output. Only user
 * messages, tool results and exit codes count as evidence; assistant text appears only as
 * the (unverified) plan.
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

/** Everything `extractSessionFacts` finds. */
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
  /** Key facts of tool output (definitions, identifiers, paths), one entry per result, oldest first. */
  outputFacts: SourceFacts[];
  /** Sections of an earlier Compactor summary found in the fork, carried forward. */
  carried: Map<string, string[]>;
}

/** Counted lines by key; the first text seen for a key is kept. */
export type LineLog = Map<string, CountedLine>;

/**
 * Counts `text` under `key` (default: the text): repeats raise the count and move `last`.
 * Keys that ignore digits fold near-repeats such as "found 2 actions" / "found 3 actions".
 */
export function note(log: LineLog, text: string, index: number, key = text): void {
  const hit = log.get(key);
  if (hit) {
    hit.count++;
    hit.last = index;
  } else log.set(key, { text, count: 1, last: index });
}

/** The key under which repeated requests and restrictions that differ only in numbers fold. */
export function foldKey(text: string): string {
  return text.replace(/\d+/g, '#').replace(/\s+/g, ' ').trim().toLowerCase();
}

/** The state the extraction fills while it walks the fork. */
export interface FactLog {
  restrictions: LineLog;
  laterRequests: LineLog;
  filesRead: LineLog;
  filesModified: LineLog;
  errors: LineLog;
  pending: LineLog;
  commands: Map<string, CommandFact>;
  toolFailures: ToolFailure[];
  /** Background sessions by id: the command that started them and whether they still run. */
  sessions: Map<string, { command: string; open: boolean; index: number }>;
  plan: string[];
  /** The file an editor-style `edit` applies to (SWE-agent's open file). */
  currentFile?: string;
}

/** An empty {@link FactLog}. */
export function emptyFactLog(): FactLog {
  return {
    restrictions: new Map(),
    laterRequests: new Map(),
    filesRead: new Map(),
    filesModified: new Map(),
    errors: new Map(),
    pending: new Map(),
    commands: new Map(),
    toolFailures: [],
    sessions: new Map(),
    plan: [],
  };
}
