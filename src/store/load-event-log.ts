import { existsSync, readFileSync } from 'node:fs';
import { UserError } from '../core/errors.js';
import { fsErrorMessage } from '../io/fs-errors.js';
import { ThreadEventSchema, type ThreadEvent } from './events.js';
import { heldMessage } from '../messages/held-text.js';
import { readFrame, type Frame } from './frame.js';

/**
 * Reading `events.jsonl` back. Only events followed by a commit line count: a write
 * cut short by a crash leaves an uncommitted tail, which loading leaves out with one
 * warning (the writer, events-log.ts, moves it aside). A damaged line before the last commit
 * is an error naming the file and line.
 */

/** Something the loader tolerated and the caller may want to report. */
export interface LogWarning {
  file: string;
  line: number;
  message: string;
}

/** A loaded log: the committed events and where the committed bytes end. */
export interface LoadedLog {
  events: ThreadEvent[];
  warnings: LogWarning[];
  /** Byte length of the committed prefix (an unfinished write starts here). */
  validBytes: number;
  /** Total bytes in the file. */
  totalBytes: number;
  /** The committed prefix ends in a whole line that lacks its newline. */
  needsNewline: boolean;
  /** The note of the last commit line that had one, and how many events it follows. */
  carry?: { events: number; carry: unknown };
}

/** A note kept on a commit line (see frame.ts) and the number of events before it. */
export type KeptCarry = NonNullable<LoadedLog['carry']>;

/** Where a scan of the log stands after each line. */
interface Scan {
  events: ThreadEvent[];
  /** Events read but not yet followed by their commit line. */
  pending: ThreadEvent[];
  validBytes: number;
  needsNewline: boolean;
  /** The last line was cut short (an unfinished write). */
  torn: boolean;
  /** Number of the line being read (1-based). */
  line: number;
  carry?: KeptCarry;
}

/** What one non-blank line did: ended the scan, added an uncommitted event, or committed. */
type LineOutcome = 'torn' | 'pending' | 'committed';

/**
 * Reads and validates every committed event. Events after the last commit line, and a
 * last line that is cut short, are an unfinished write: left out with one warning. Any
 * other bad line, or a sequence gap, throws a {@link UserError} "FILE:LINE: …".
 */
export function loadEventLog(file: string): LoadedLog {
  if (!existsSync(file))
    return { events: [], warnings: [], validBytes: 0, totalBytes: 0, needsNewline: false };
  const buf = readLog(file);
  const scan = scanLog(file, buf);
  return {
    events: scan.events,
    warnings: tailWarnings(file, buf.length, scan),
    validBytes: scan.validBytes,
    totalBytes: buf.length,
    needsNewline: scan.needsNewline,
    ...(scan.carry ? { carry: scan.carry } : {}),
  };
}

function readLog(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new UserError(`${file}: cannot read event log (${fsErrorMessage(e)})`);
  }
}

/** Walks the log line by line, keeping the committed events and where the committed bytes end. */
function scanLog(file: string, buf: Buffer): Scan {
  const scan: Scan = { events: [], pending: [], validBytes: 0, needsNewline: false, torn: false, line: 0 };
  for (let offset = 0; offset < buf.length;) {
    scan.line++;
    const nl = buf.indexOf(0x0a, offset);
    const text = buf.subarray(offset, nl < 0 ? buf.length : nl).toString('utf8');
    offset = nl < 0 ? buf.length : nl + 1;
    if (text.trim() === '') {
      if (scan.pending.length === 0 && nl >= 0 && !scan.needsNewline) scan.validBytes = offset;
      continue;
    }
    // Only a damaged line needs to know whether it is the last one, so ask only then.
    const isLast = () =>
      nl < 0 ||
      buf
        .subarray(nl + 1)
        .toString('utf8')
        .trim() === '';
    const outcome = takeLine(scan, readFrame(text), isLast, `${file}:${scan.line}`);
    if (outcome === 'torn') {
      scan.torn = true;
      break;
    }
    if (outcome === 'pending') continue;
    scan.validBytes = offset;
    scan.needsNewline = nl < 0;
  }
  return scan;
}

/** Takes one non-blank line's frame into the scan; `where` is "FILE:LINE" for errors. */
function takeLine(scan: Scan, frame: Frame, isLast: () => boolean, where: string): LineOutcome {
  if (frame.kind === 'bad') {
    if (isLast()) return 'torn';
    throw new UserError(`${where}: ${frame.reason}`);
  }
  const read = scan.events.length + scan.pending.length;
  if (frame.kind === 'commit') {
    if (frame.seq !== read)
      throw new UserError(
        `${where}: commit of event ${frame.seq} does not follow event ${read} (log damaged)`,
      );
    commitPending(scan);
    if (frame.carry !== undefined) scan.carry = { events: frame.seq, carry: frame.carry };
    return 'committed';
  }
  const parsed = ThreadEventSchema.safeParse(frame.value);
  if (!parsed.success) {
    // An old unframed last line that fails the schema was cut short; a framed one was not.
    if (frame.kind === 'legacy' && isLast()) return 'torn';
    throw new UserError(`${where}: ${describeIssue(parsed.error)}`);
  }
  if (parsed.data.seq !== read + 1)
    throw new UserError(`${where}: seq: expected ${read + 1}, found ${parsed.data.seq} (log damaged)`);
  scan.pending.push(withHeldTexts(parsed.data));
  if (frame.kind === 'event') return 'pending';
  commitPending(scan); // an unframed line from before framing commits itself
  return 'committed';
}

/** An event as a live session keeps it: the long texts of its messages held as UTF-8. */
function withHeldTexts(e: ThreadEvent): ThreadEvent {
  return e.type === 'message.appended'
    ? { ...e, message: heldMessage(e.message) }
    : { ...e, history: e.history.map(heldMessage) };
}

function commitPending(scan: Scan): void {
  scan.events.push(...scan.pending);
  scan.pending = [];
}

function describeIssue(e: unknown): string {
  const issue = (e as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues?.[0];
  if (!issue) return String(e);
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'event';
  return `${field}: ${issue.message}`;
}

/** One warning for an unfinished write after the last commit, or for a missing final newline. */
function tailWarnings(file: string, totalBytes: number, scan: Scan): LogWarning[] {
  const { pending, torn } = scan;
  if (pending.length > 0 || torn)
    return [
      {
        file,
        line: 0,
        message: `${totalBytes - scan.validBytes} bytes of an unfinished write (${pending.length} whole record${pending.length === 1 ? '' : 's'}${torn ? ' and a cut-off line' : ''}) are not part of the session`,
      },
    ];
  if (scan.needsNewline) return [{ file, line: scan.line, message: 'final line had no newline terminator' }];
  return [];
}
