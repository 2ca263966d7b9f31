import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { CompactorError } from '../core/errors.js';
import type { UsageTap } from './usage-tap.js';

/** Bytes held for a reader that has not taken them before the upstream read pauses. */
const HELD_BYTES = 64 * 1024;

/** Why the proxy ended an upstream request before its answer had all come. */
const stopped = (why: string) => new CompactorError('upstream-read-stopped', why);

/** What a dump reads of a body nobody wants before it closes the connection instead. */
const DUMP_BYTES = 128 * 1024;

/**
 * An answer's body as it arrives from the upstream, straight from undici's dispatch handler: a
 * short queue of chunks, no stream. The upstream read pauses while a reader has
 * {@link HELD_BYTES} it has not taken, or while the client's socket is full, and goes on once
 * it has room again.
 */
export class ArrivingBody {
  private queue: Buffer[] = [];
  private held = 0;
  private ended = false;
  private failure: Error | undefined;
  // Who waits for the next chunk or the end (a reader, a relay, a dump).
  private wake: (() => void) | undefined;
  // A relay or a dump takes each chunk as it comes instead of the queue.
  private sink: ((chunk: Buffer) => void) | undefined;
  private readonly finished: Promise<void>;
  private finish!: () => void;

  constructor(private readonly controller: Dispatcher.DispatchController) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
  }

  /** The dispatch handler's side: a chunk arrived. */
  data(chunk: Buffer): void {
    if (this.sink !== undefined) return this.sink(chunk);
    this.queue.push(chunk);
    this.held += chunk.length;
    if (this.held >= HELD_BYTES) this.controller.pause();
    this.wakeUp();
  }

  /** The dispatch handler's side: the body ended, or failed with `e`. */
  end(e?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = e;
    this.finish();
    this.wakeUp();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private next(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  /** Reads the chunks in turn (no generator: a chunk already here costs no waiting). */
  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    const take = (): Promise<IteratorResult<Buffer>> | IteratorResult<Buffer> | undefined => {
      const chunk = this.queue.shift();
      if (chunk !== undefined) {
        this.held -= chunk.length;
        if (this.controller.paused && this.held < HELD_BYTES) this.controller.resume();
        return { value: chunk, done: false };
      }
      if (!this.ended) return undefined;
      return this.failure !== undefined ? Promise.reject(this.failure) : { value: undefined, done: true };
    };
    const next = async (): Promise<IteratorResult<Buffer>> => {
      for (;;) {
        const got = take();
        if (got !== undefined) return got;
        await this.next();
      }
    };
    return {
      next,
      // A reader that stops before the end wants no more of it: the request ends.
      return: () => {
        if (!this.ended && !this.controller.aborted) this.controller.abort(stopped('the reader stopped'));
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  /** The whole body as text. */
  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of this) chunks.push(c);
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * Lets the body go: what arrives is dropped (a long one ends its connection instead).
   * Resolves once it has ended.
   */
  dump(): Promise<void> {
    let read = this.held;
    this.queue = [];
    this.held = 0;
    this.sink = (c) => {
      read += c.length;
      if (read > DUMP_BYTES && !this.controller.aborted)
        this.controller.abort(stopped('a dropped answer went on too long'));
    };
    if (this.controller.paused) this.controller.resume();
    return this.finished;
  }

  /**
   * Writes the body to the client as it arrives, `tap` reading the same bytes, and ends the
   * client's answer with it. The upstream read pauses while the client's socket is full; a
   * client gone ends the upstream request. Rejects when the upstream's body fails.
   */
  relayTo(res: ServerResponse, tap?: UsageTap): Promise<void> {
    const { controller } = this;
    const write = (c: Buffer) => {
      tap?.write(c);
      if (!res.write(c) && !controller.paused) controller.pause();
    };
    const onDrain = () => {
      if (controller.paused && !this.ended) controller.resume();
    };
    return new Promise<void>((resolve, reject) => {
      const onClose = () => {
        // A client gone midway costs the upstream request at once.
        if (!this.ended && !controller.aborted) controller.abort(stopped('the client went away'));
        resolve();
      };
      res.on('drain', onDrain);
      res.once('close', onClose);
      for (const c of this.queue) write(c);
      this.queue = [];
      this.held = 0;
      this.sink = write;
      void this.finished.then(() => {
        res.off('drain', onDrain);
        if (this.failure !== undefined) {
          res.off('close', onClose);
          res.destroy(this.failure);
          reject(this.failure);
          return;
        }
        tap?.end();
        res.end(() => {
          res.off('close', onClose);
          resolve();
        });
      });
      if (!this.ended && controller.paused && res.writableLength === 0) controller.resume();
    });
  }
}
