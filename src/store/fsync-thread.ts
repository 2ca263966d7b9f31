import { fsync } from 'node:fs';
import { getSystemErrorName, promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { InternalError } from '../core/errors.js';

/**
 * Fsyncs on a thread of their own. A turn writes its lines, asks for their fsync and does its
 * work while the disk is busy; it may return only once the fsync is done. Through Node's thread
 * pool that costs a work item to hand the fsync over and a pass of the event loop to see it end,
 * even when it ended long before the turn did. Here the main thread puts the file's descriptor
 * in shared memory and wakes one waiting thread; that thread fsyncs and publishes how far it got,
 * so a turn that finds its fsync done (the usual case) goes on at once. Until the thread is
 * ready, when it has stopped, or with too many fsyncs waiting, the thread pool does it as before.
 */

/** Fsyncs that may wait at once (a power of two: slots are taken in turn). */
const SLOTS = 256;
// Counters in `ctl`: fsyncs asked for, fsyncs done, the thread is ready.
const ASKED = 0;
const DONE = 1;
const READY = 2;

/**
 * The thread's code (plain JavaScript, run as given): it waits until more fsyncs are asked for
 * than done, fsyncs each file asked for once (one fsync covers every write made before it), keeps
 * each slot's error number, then publishes the new count and wakes whoever waits for it.
 */
const THREAD = `
const { workerData } = require('node:worker_threads');
const { fsyncSync } = require('node:fs');
const ctl = new Int32Array(workerData.ctl);
const fds = new Int32Array(workerData.fds);
const errs = new Int32Array(workerData.errs);
const mask = fds.length - 1;
let done = Atomics.load(ctl, ${DONE});
Atomics.store(ctl, ${READY}, 1);
for (;;) {
  const asked = Atomics.load(ctl, ${ASKED});
  if (asked === done) {
    Atomics.wait(ctl, ${ASKED}, asked);
    continue;
  }
  const results = new Map();
  for (let s = done; s !== asked; s = (s + 1) | 0) {
    const fd = fds[s & mask];
    if (!results.has(fd)) {
      try {
        fsyncSync(fd);
        results.set(fd, 0);
      } catch (e) {
        results.set(fd, typeof e.errno === 'number' ? e.errno : -5);
      }
    }
    errs[s & mask] = results.get(fd);
  }
  done = asked;
  Atomics.store(ctl, ${DONE}, done);
  Atomics.notify(ctl, ${DONE});
}
`;

const fsyncPool = promisify(fsync);

// In Node 20 and later; the compiler's library here predates it.
type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

interface Waiter {
  resolve(): void;
  reject(e: Error): void;
}

class FsyncThread {
  private readonly ctl = new Int32Array(new SharedArrayBuffer(3 * 4));
  private readonly fds = new Int32Array(new SharedArrayBuffer(SLOTS * 4));
  private readonly errs = new Int32Array(new SharedArrayBuffer(SLOTS * 4));
  private readonly waiters: Array<Waiter | undefined> = new Array<Waiter | undefined>(SLOTS);
  private readonly worker: Worker;
  private asked = 0;
  private settled = 0;
  private stopped = false;
  /** Whether a wait for the thread's next count is on (then the thread keeps the process alive). */
  private watching = false;

  constructor() {
    this.worker = new Worker(THREAD, {
      eval: true,
      workerData: { ctl: this.ctl.buffer, fds: this.fds.buffer, errs: this.errs.buffer },
      // Plain JavaScript: none of the process's loaders (--import, --require) is needed there.
      execArgv: [],
      // A tiny heap: the thread holds three shared arrays and a small map.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
      stdout: false,
      stderr: false,
    });
    this.worker.unref();
    const stop = (e: Error) => this.stop(e);
    this.worker.on('error', stop);
    this.worker.on('exit', (code) => stop(new InternalError(`the fsync thread stopped (exit code ${code})`)));
  }

  /** The fsync of `fd`, or undefined when the thread cannot take it (not ready, stopped, full). */
  fsync(fd: number): Promise<void> | undefined {
    if (!this.ready) return undefined;
    if (((this.asked - this.settled) | 0) >= SLOTS) return undefined;
    const slot = this.asked & (SLOTS - 1);
    this.fds[slot] = fd;
    const done = new Promise<void>((resolve, reject) => (this.waiters[slot] = { resolve, reject }));
    this.asked = (this.asked + 1) | 0;
    Atomics.store(this.ctl, ASKED, this.asked);
    Atomics.notify(this.ctl, ASKED);
    return done;
  }

  /**
   * Settles every fsync the thread has finished, now. Its promise's reactions then run before
   * the event loop goes on: a turn whose fsync is done waits no pass of the loop for it.
   */
  settleFinished(): void {
    const done = Atomics.load(this.ctl, DONE);
    while (this.settled !== done) {
      const slot = this.settled & (SLOTS - 1);
      const waiter = this.waiters[slot];
      this.waiters[slot] = undefined;
      this.settled = (this.settled + 1) | 0;
      const errno = this.errs[slot]!;
      if (errno === 0) waiter?.resolve();
      else waiter?.reject(syncError(errno));
    }
    if (this.settled !== this.asked) this.watch();
  }

  /** Waits (off the main thread) for the thread's next count; keeps the process alive meanwhile. */
  private watch(): void {
    if (this.watching || this.stopped) return;
    // From the count already settled, not a fresh read: a count the thread published after
    // `settleFinished` read it would be the value waited on, and its change never comes.
    const wait = waitAsync(this.ctl, DONE, this.settled);
    this.watching = true;
    this.worker.ref();
    const next = () => {
      this.watching = false;
      if (!this.stopped) this.worker.unref();
      this.settleFinished();
    };
    if (wait.async) void wait.value.then(next);
    else queueMicrotask(next);
  }

  /** The thread ended (it never should): every fsync it had not finished fails. */
  private stop(e: Error): void {
    if (this.stopped) return;
    this.settleFinished();
    this.stopped = true;
    while (this.settled !== this.asked) {
      const slot = this.settled & (SLOTS - 1);
      this.waiters[slot]?.reject(e);
      this.waiters[slot] = undefined;
      this.settled = (this.settled + 1) | 0;
    }
  }

  /** Whether fsyncs go to the thread now. */
  get ready(): boolean {
    return !this.stopped && Atomics.load(this.ctl, READY) === 1;
  }

  /** Ends the thread (tests: what a crash of it does to the fsyncs waiting). */
  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/** An fsync error with the fields of Node's own (code, errno, syscall): callers read it the same way. */
function syncError(errno: number): Error {
  let code = 'EIO';
  try {
    code = getSystemErrorName(errno);
  } catch {
    // An error number the system does not name: reported as an I/O error.
  }
  return Object.assign(new InternalError(`${code}: fsync failed`), { code, errno, syscall: 'fsync' });
}

let thread: FsyncThread | undefined;
let starting = false;

/**
 * Fsyncs `fd` off the event loop; the promise resolves once it is done. The first call starts
 * the thread (meanwhile the thread pool does the fsyncs).
 */
export function fsyncOffThread(fd: number): Promise<void> {
  if (thread === undefined && !starting) {
    starting = true;
    try {
      thread = new FsyncThread();
    } catch {
      // No thread (a platform without them): the thread pool does every fsync.
    }
  }
  const done = thread?.fsync(fd);
  if (done) thread!.settleFinished(); // starts the wait for the thread's count
  return done ?? fsyncPool(fd);
}

/** Settles the fsyncs the thread has finished (see {@link FsyncThread.settleFinished}). */
export function settleFinishedFsyncs(): void {
  thread?.settleFinished();
}

/** Whether fsyncs go to the fsync thread now (not before it has started, nor after it stopped). */
export function fsyncThreadReady(): boolean {
  return thread?.ready === true;
}

/** Test seam: ends the fsync thread as a crash would; later fsyncs start a new one. */
export async function stopFsyncThreadForTest(): Promise<void> {
  const t = thread;
  thread = undefined;
  starting = false;
  await t?.terminate();
}
