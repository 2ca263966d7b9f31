import { closeSync, constants, fsync, ftruncate, openSync, write } from 'node:fs';
import { promisify } from 'node:util';
import { InternalError } from '../core/errors.js';
import { fsError } from '../io/fs-errors.js';
import { PRIVATE_FILE } from '../io/private.js';

/**
 * The writes of one session file, in order, without blocking the event loop. Every append ends
 * with a commit line (lines without one wait in the event log, see events-log.ts). Appends go
 * to the position the file will have once every earlier step has run (known when they are
 * queued: this process is the file's one writer), so appends queued while another write is on
 * its way go out together with one fsync. A step that fails cuts the file back to its last
 * commit line and refuses every later step: the caller reopens the session from what is on
 * disk, which is then exactly what was acknowledged.
 */

/** The file operations a queued write uses; a test seam for disk faults (ENOSPC, EIO). */
export interface QueueIo {
  write(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number>;
  fsync(fd: number): Promise<void>;
}

const writeAsync = promisify(write);
const NODE_IO: QueueIo = {
  write: async (fd, buf, off, len, pos) => (await writeAsync(fd, buf, off, len, pos)).bytesWritten,
  fsync: promisify(fsync),
};
const truncateAsync = promisify(ftruncate);

type Step = { kind: 'append'; buf: Buffer } | { kind: 'task'; run: () => Promise<void> };

export class WriteQueue {
  private readonly fd: number;
  private readonly steps: Step[] = [];
  private running: Promise<void> | undefined;
  private failure: Error | undefined;
  private onClosed: (() => void) | undefined;
  private closed = false;
  /** The file's size on disk, up to its last commit line (every append ends with one). */
  private durable: number;
  /** Appends queued so far, and how many of them are written (their fsync may still run). */
  private appends = { queued: 0, written: 0 };
  private readonly waiting: Array<{ appends: number; resolve(): void; reject(e: Error): void }> = [];

  constructor(
    readonly file: string,
    size: number,
    private readonly io: QueueIo = NODE_IO,
  ) {
    // Opened once, with the session; positions are explicit, so no append mode.
    this.fd = openSync(file, constants.O_RDWR | constants.O_CREAT, PRIVATE_FILE);
    this.durable = size;
  }

  /** Queues whole framed lines (in pieces, in order) ending with a commit line. */
  append(pieces: readonly Buffer[]): void {
    this.usable();
    this.appends.queued++;
    this.push({ kind: 'append', buf: pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces) });
  }

  /**
   * Resolves once every append queued so far is written to the file, before its fsync: it then
   * survives a killed process (not a crash of the machine: {@link WriteQueue.flush} waits for
   * that); rejects with the failure that stopped the queue.
   */
  written(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const appends = this.appends.queued;
    if (this.appends.written >= appends) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting.push({ appends, resolve, reject }));
  }

  /** Queues another write (an artifact, a snapshot) to run in order with the appends. */
  task(run: () => Promise<void>): void {
    this.usable();
    this.push({ kind: 'task', run });
  }

  /** Resolves once every step queued so far is on disk; rejects with the failure that stopped the queue. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    if (this.failure) throw this.failure;
  }

  /** Closes the file once the queued steps have run, then calls `onClosed` (a lock's release). */
  close(onClosed: () => void = () => undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.onClosed = onClosed;
    if (!this.running) this.finish();
  }

  /** Throws the failure that stopped the queue, or when it was closed. */
  usable(): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new InternalError(`${this.file}: written after the session store was closed`);
  }

  private push(step: Step): void {
    this.steps.push(step);
    this.kick();
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      // A step queued while the last one finished starts a new round.
      if (this.steps.length > 0) this.kick();
      else if (this.closed) this.finish();
    });
  }

  private finish(): void {
    closeSync(this.fd);
    this.onClosed?.();
    this.onClosed = undefined;
  }

  private async drain(): Promise<void> {
    while (this.steps.length > 0) {
      const step = this.steps.shift()!;
      try {
        if (step.kind === 'append') await this.appendGroup(step);
        else await step.run();
      } catch (e) {
        await this.fail(e);
      }
    }
  }

  /** Writes the step and every append queued right after it at once, then one fsync. */
  private async appendGroup(first: Step & { kind: 'append' }): Promise<void> {
    const group = [first];
    while (this.steps[0]?.kind === 'append') group.push(this.steps.shift() as Step & { kind: 'append' });
    const buf = group.length === 1 ? first.buf : Buffer.concat(group.map((s) => s.buf));
    const at = this.durable;
    let off = 0;
    while (off < buf.length) off += await this.io.write(this.fd, buf, off, buf.length - off, at + off);
    this.wrote(group.length);
    await this.io.fsync(this.fd);
    this.durable = at + buf.length;
  }

  /** Counts appends written and lets go of those waiting for them. */
  private wrote(appends: number): void {
    this.appends.written += appends;
    const done = this.waiting.filter((w) => w.appends <= this.appends.written);
    if (done.length === 0) return;
    this.waiting.splice(0, done.length); // waiting in order of their counts
    for (const w of done) w.resolve();
  }

  /** Drops every later step and cuts the file back to its last commit on disk. */
  private async fail(e: unknown): Promise<void> {
    this.failure = fsError(this.file, 'write', e);
    this.steps.length = 0;
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
    try {
      await truncateAsync(this.fd, this.durable);
      await this.io.fsync(this.fd);
    } catch {
      // The disk refuses even this; loading will then find an unfinished write and set it aside.
    }
  }
}
