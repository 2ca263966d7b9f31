import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import type { ThreadEvent } from './events.js';
import { commitLine, frameLine } from './frame.js';
import type { LoadedLog } from './load-event-log.js';
import { fsyncOffThread } from './fsync-thread.js';
import { WriteQueue, type QueueIo } from './write-queue.js';
import { InternalError } from '../core/errors.js';
import { fsError } from '../io/fs-errors.js';
import { PRIVATE_FILE } from '../io/private.js';

/**
 * Writing the append-only `events.jsonl`. Each write is one `write` of whole framed
 * lines (see frame.ts) ending in a commit line, followed by `fsync`: an acknowledged write
 * survives a crash, and a write cut short by a crash leaves an uncommitted tail that
 * loading (load-event-log.ts) detects. A writer moves that tail aside into
 * `events.jsonl.corrupt` before it appends. A server's log queues its writes instead
 * (write-queue.ts): the same lines, written and fsynced off the event loop, in order. There,
 * lines appended without a commit line wait in memory and go out with the line that commits
 * them, in one write: until then they count for nothing on disk anyway, a dropped turn then
 * leaves the file untouched, and a turn costs one hand-off of a write to the thread pool, not two.
 */

/** Suffix of the file an unfinished write is moved to. */
export const CORRUPT_SUFFIX = '.corrupt';

/** The file operations an append uses; a test seam for disk faults (ENOSPC, EIO). */
export interface AppendIo {
  writeSync(fd: number, buf: Buffer, offset: number, length: number): number;
  fsyncSync(fd: number): void;
  /** The fsync of {@link EventLog.appendSyncingLater}, off the event loop (default: fsync-thread.ts). */
  fsync?(fd: number): Promise<void>;
}

const NODE_IO: AppendIo = {
  writeSync: (fd, buf, off, len) => writeSync(fd, buf, off, len),
  fsyncSync,
};

function writeOnly(io: AppendIo, fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += io.writeSync(fd, buf, off, buf.length - off);
}

function writeAll(io: AppendIo, fd: number, buf: Buffer): void {
  writeOnly(io, fd, buf);
  io.fsyncSync(fd);
}

/** An open, append-only event log. */
export class EventLog {
  private fd: number | undefined;
  /** Bytes up to the last commit line written by this log (set when the file is opened). */
  private committedBytes = 0;
  /**
   * The file's size as this log left it, so an append needs no stat of the file (undefined:
   * read it again, after a cut back the disk refused).
   */
  private size: number | undefined;
  private lastSeq = 0;
  private uncommitted = 0;
  private queue: WriteQueue | undefined;
  /**
   * A queued log's lines appended without a commit line, not yet handed to the queue (as bytes,
   * off the heap, as they would be written: the turn may wait long for its commit).
   */
  private held: Buffer[] = [];
  /** The last fsync off the event loop, while it runs. */
  private syncing: Promise<void> | undefined;
  /** Set when an fsync off the event loop failed: the log then refuses every write. */
  private failure: Error | undefined;

  constructor(
    readonly file: string,
    private readonly io: AppendIo = NODE_IO,
  ) {}

  /**
   * Moves an unfinished write (bytes after the last commit) aside into
   * `events.jsonl.corrupt` and cuts it off, so a new line never glues onto crash debris;
   * restores a missing final newline. Returns what it did, for the caller to report.
   */
  repairTail(loaded: LoadedLog): string | undefined {
    this.lastSeq = loaded.events.length;
    if (loaded.totalBytes === loaded.validBytes && !loaded.needsNewline) return undefined;
    const fd = openSync(this.file, 'r+');
    try {
      let moved: string | undefined;
      if (loaded.totalBytes > loaded.validBytes) {
        const tail = Buffer.alloc(loaded.totalBytes - loaded.validBytes);
        const n = tail.length;
        let off = 0;
        while (off < n) off += readChunk(fd, tail, off, loaded.validBytes + off);
        const aside = openSync(this.file + CORRUPT_SUFFIX, 'a', PRIVATE_FILE);
        try {
          writeAll(NODE_IO, aside, tail);
        } finally {
          closeSync(aside);
        }
        ftruncateSync(fd, loaded.validBytes);
        moved = `moved ${n} bytes of an unfinished write aside to ${this.file}${CORRUPT_SUFFIX}`;
      }
      if (loaded.needsNewline) writeSync(fd, '\n', loaded.validBytes);
      fsyncSync(fd);
      return moved;
    } finally {
      closeSync(fd);
    }
  }

  /** From now on writes are queued, not made at once (call after {@link EventLog.repairTail}). */
  queueWrites(io?: QueueIo): void {
    const size = existsSync(this.file) ? statSync(this.file).size : 0;
    this.queue = new WriteQueue(this.file, size, io);
  }

  /** Whether writes are queued. */
  get queued(): boolean {
    return this.queue !== undefined;
  }

  /** Runs `write` in order with the queued appends (at once when writes are not queued). */
  inOrder(write: () => Promise<void>, now: () => void): void {
    if (this.queue) this.queue.task(write);
    else now();
  }

  /** Resolves once every queued write so far reached the file, before its fsync (see {@link WriteQueue.written}). */
  written(): Promise<void> {
    return this.queue?.written() ?? Promise.resolve();
  }

  /** Resolves once every write so far is on disk; rejects with a failed queued write. */
  flush(): Promise<void> {
    return this.queue?.flush() ?? Promise.resolve();
  }

  private open(): number {
    if (this.fd === undefined) {
      this.fd = openSync(this.file, 'a', PRIVATE_FILE);
      this.size = fstatSync(this.fd).size;
      this.committedBytes = this.size;
    }
    return this.fd;
  }

  /**
   * Appends events as framed lines in one write, ending with a commit line (holding `carry`,
   * when given: then written even with no events) unless `commit` is false (then {@link EventLog.commit} or {@link EventLog.rollback} follows),
   * then fsyncs (the durability point). A write or fsync that fails (ENOSPC, EIO)
   * truncates the file back to where it was before rethrowing, so the caller's
   * sequence numbers stay in step with the file.
   */
  append(events: readonly ThreadEvent[], commit = true, carry?: unknown): void {
    if (events.length === 0 && (carry === undefined || !commit)) return commit ? this.commit() : undefined;
    const lines = events.map((e) => frameLine(e));
    const last = events.at(-1)?.seq ?? this.lastSeq;
    if (commit) lines.push(commitLine(last, carry));
    this.write(lines);
    this.lastSeq = last;
    this.uncommitted = commit ? 0 : this.uncommitted + events.length;
  }

  /**
   * Appends events and their commit line at once, like {@link EventLog.append}, but returns
   * before the fsync, which runs off the event loop: the caller does its own work while the
   * disk is busy and awaits the returned promise before it acknowledges the events. A failed
   * fsync cuts the file back to before them (when nothing was written after them) and the log
   * refuses every later write: reopen it. A queued log queues the append and waits for it.
   * `carry` goes on the commit line (then it is written even with no events).
   */
  appendSyncingLater(events: readonly ThreadEvent[], carry?: unknown): Promise<void> {
    if (this.queue) {
      this.append(events, true, carry);
      return this.queue.flush();
    }
    if (events.length === 0 && carry === undefined) return Promise.resolve();
    this.usable();
    const last = events.at(-1)?.seq ?? this.lastSeq;
    const fd = this.open();
    const before = this.sizeOf(fd);
    const buf = framed(events, last, carry);
    try {
      writeOnly(this.io, fd, buf);
    } catch (e) {
      this.cutBack(fd, before);
      throw e;
    }
    this.size = before + buf.length;
    const previous = { seq: this.lastSeq, committed: this.committedBytes };
    this.lastSeq = last;
    this.uncommitted = 0;
    this.committedBytes = before + buf.length;
    const syncing = (this.io.fsync ?? fsyncOffThread)(fd);
    this.syncing = syncing;
    const ended = () => {
      if (this.syncing === syncing) this.syncing = undefined;
    };
    syncing.then(ended, ended);
    return syncing.catch((e: unknown) => {
      this.failure = fsError(this.file, 'write', e);
      // Later writes (each fsynced itself) keep their place; with none, the file is as before.
      if (this.fd === fd && this.committedBytes === before + buf.length) {
        this.cutBack(fd, before);
        this.lastSeq = previous.seq;
        this.committedBytes = previous.committed;
      }
      throw this.failure;
    });
  }

  private usable(): void {
    if (this.failure) throw this.failure;
  }

  private sizeOf(fd: number): number {
    return (this.size ??= fstatSync(fd).size);
  }

  /** Cuts the file back to `size` after a failed write (best effort: loading finds what is left). */
  private cutBack(fd: number, size: number): void {
    this.size = undefined;
    try {
      ftruncateSync(fd, size);
      this.size = size;
      fsyncSync(fd);
    } catch {
      // The disk refuses even the rollback; loading will then find an unfinished write.
    }
  }

  /** Commits the events appended without a commit line (no-op when there are none), `carry` on its line. */
  commit(carry?: unknown): void {
    if (this.uncommitted === 0) return;
    this.write([commitLine(this.lastSeq, carry)]);
    this.uncommitted = 0;
  }

  /** Cuts off the events appended since the last commit; returns how many there were. */
  rollback(): number {
    const dropped = this.uncommitted;
    if (dropped === 0) return 0;
    if (this.queue) this.held = [];
    else if (this.fd === undefined) return 0;
    else {
      this.size = undefined;
      ftruncateSync(this.fd, this.committedBytes);
      this.size = this.committedBytes;
      fsyncSync(this.fd);
    }
    this.lastSeq -= dropped;
    this.uncommitted = 0;
    return dropped;
  }

  private write(lines: string[]): void {
    if (this.queue) {
      const text = lines.map((l) => `${l}\n`).join('');
      if (!lines[lines.length - 1]!.startsWith('{"commit":')) {
        this.queue.usable();
        this.held.push(Buffer.from(text, 'utf8'));
        return;
      }
      const held = this.held;
      this.held = [];
      return this.queue.append([...held, Buffer.from(text, 'utf8')]);
    }
    this.usable();
    const fd = this.open();
    const before = this.sizeOf(fd);
    const buf = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
    try {
      writeAll(this.io, fd, buf);
    } catch (e) {
      this.cutBack(fd, before);
      throw e;
    }
    this.size = before + buf.length;
    if (lines[lines.length - 1]!.startsWith('{"commit":')) this.committedBytes = before + buf.length;
  }

  /** Events appended and not yet committed. */
  get pending(): number {
    return this.uncommitted;
  }

  /** Closes the file; `onClosed` runs once it is (after the queued writes, when there are any). */
  close(onClosed: () => void = () => undefined): void {
    const { fd, syncing } = this;
    this.fd = undefined;
    this.size = undefined;
    const done = () => {
      if (fd !== undefined) closeSync(fd);
      if (this.queue) this.queue.close(onClosed);
      else onClosed();
    };
    // An fsync still running keeps the file open (its number could name another file once closed).
    if (syncing) void syncing.then(done, done);
    else done();
  }
}

/** Events and their commit line (at `last`, holding `carry`) as framed lines in one buffer (one string, no arrays). */
function framed(events: readonly ThreadEvent[], last: number, carry: unknown): Buffer {
  let text = '';
  for (const e of events) text += `${frameLine(e)}\n`;
  return Buffer.from(`${text}${commitLine(last, carry)}\n`, 'utf8');
}

function readChunk(fd: number, buf: Buffer, off: number, position: number): number {
  const n = readSync(fd, buf, off, buf.length - off, position);
  if (n === 0) throw new InternalError('event log shrank while being repaired');
  return n;
}
