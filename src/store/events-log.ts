import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { UserError } from '../core/errors.js';
import { ThreadEventSchema, type ThreadEvent } from './events.js';

/**
 * The append-only `events.jsonl` (R1–R2). Appends are one `write` of whole lines followed
 * by `fsync`, so an acknowledged append survives a crash. A crash mid-append can leave at
 * most one torn final line; loading ignores and reports it (never fatal), while a damaged
 * line in the middle is an error naming the file and line.
 */

/** Something the loader tolerated and the caller may want to report. */
export interface LogWarning {
  file: string;
  line: number;
  message: string;
}

/** A loaded log: the valid events and where the valid bytes end. */
export interface LoadedLog {
  events: ThreadEvent[];
  warnings: LogWarning[];
  /** Byte length of the intact prefix (a torn tail starts here). */
  validBytes: number;
  /** Total bytes in the file. */
  totalBytes: number;
}

function describeIssue(e: unknown): string {
  if (e instanceof SyntaxError) return `invalid JSON (${e.message})`;
  const issue = (e as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues?.[0];
  if (!issue) return String(e);
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'event';
  return `${field}: ${issue.message}`;
}

/**
 * Reads and validates every event. A last line that is unterminated or does not parse is
 * a torn write: ignored with a warning. Any other bad line, or a sequence gap, throws a
 * {@link UserError} "FILE:LINE: …".
 */
export function loadEventLog(file: string): LoadedLog {
  if (!existsSync(file)) return { events: [], warnings: [], validBytes: 0, totalBytes: 0 };
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (e) {
    throw new UserError(`${file}: cannot read event log (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const events: ThreadEvent[] = [];
  const warnings: LogWarning[] = [];
  let offset = 0;
  let line = 0;
  let validBytes = 0;
  while (offset < buf.length) {
    line++;
    const lineStart = offset;
    const nl = buf.indexOf(0x0a, offset);
    const end = nl < 0 ? buf.length : nl;
    const isLast = nl < 0 || nl === buf.length - 1;
    const text = buf.subarray(offset, end).toString('utf8');
    offset = nl < 0 ? buf.length : nl + 1;
    if (text.trim() === '') {
      if (nl >= 0) validBytes = offset;
      continue;
    }
    let event: ThreadEvent;
    try {
      event = ThreadEventSchema.parse(JSON.parse(text));
    } catch (e) {
      if (isLast) {
        warnings.push({
          file,
          line,
          message: `ignored torn final line (${end - lineStart} bytes): ${describeIssue(e)}`,
        });
        break;
      }
      throw new UserError(`${file}:${line}: ${describeIssue(e)}`);
    }
    if (nl < 0) {
      // Parsed but unterminated: the newline never reached the disk, so the append was
      // never acknowledged. Keep the event (it is whole) but repair the terminator.
      warnings.push({ file, line, message: 'final line had no newline terminator' });
    }
    const expected = events.length + 1;
    if (event.seq !== expected)
      throw new UserError(`${file}:${line}: seq: expected ${expected}, found ${event.seq} (log damaged)`);
    events.push(event);
    validBytes = offset;
  }
  return { events, warnings, validBytes, totalBytes: buf.length };
}

/** The file operations an append uses; a test seam for disk faults (ENOSPC, EIO). */
export interface AppendIo {
  writeSync(fd: number, buf: Buffer, offset: number, length: number): number;
  fsyncSync(fd: number): void;
}

const NODE_IO: AppendIo = { writeSync: (fd, buf, off, len) => writeSync(fd, buf, off, len), fsyncSync };

/** An open, append-only event log. */
export class EventLog {
  private fd: number | undefined;

  constructor(
    readonly file: string,
    private readonly io: AppendIo = NODE_IO,
  ) {}

  /**
   * Drops a torn tail (bytes after the last intact line) before appending, so a new line
   * never glues onto crash debris; restores a missing final newline.
   */
  repairTail(loaded: LoadedLog): void {
    if (loaded.totalBytes === loaded.validBytes && loaded.warnings.length === 0) return;
    const fd = openSync(this.file, 'r+');
    try {
      ftruncateSync(fd, loaded.validBytes);
      if (loaded.warnings.some((w) => w.message.startsWith('final line had no newline'))) {
        writeSync(fd, '\n', loaded.validBytes);
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Appends events as whole lines in one write, then fsyncs (the durability point). A write
   * or fsync that fails (ENOSPC, EIO) truncates the file back to where it was before
   * rethrowing (R2), so a process that keeps running never glues its next line onto a
   * partial one, and the caller's sequence numbers stay in step with the file.
   */
  append(events: readonly ThreadEvent[]): void {
    if (events.length === 0) return;
    const fd = (this.fd ??= openSync(this.file, 'a', 0o644));
    const before = fstatSync(fd).size;
    const buf = Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''), 'utf8');
    try {
      let off = 0;
      while (off < buf.length) off += this.io.writeSync(fd, buf, off, buf.length - off);
      this.io.fsyncSync(fd);
    } catch (e) {
      try {
        ftruncateSync(fd, before);
        fsyncSync(fd);
      } catch {
        // The disk refuses even the rollback; loading will then report a torn tail.
      }
      throw e;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
