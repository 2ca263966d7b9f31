import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../core/errors.js';
import { fsError } from '../io/fs-errors.js';
import { processAlive } from '../io/process-alive.js';
import { PRIVATE_FILE } from '../io/private.js';

/**
 * The exclusive writer lock of a session directory. A writer creates `lock` with
 * O_EXCL and writes who holds it (pid, host, start time); a second writer finds it and fails
 * at once naming the holder, or waits for it. A lock whose process is gone (same host, no
 * such pid) is stale and is broken, under a second O_EXCL file so two breakers cannot
 * both win. Readers never take it.
 */

export const LOCK_FILE = 'lock';
const BREAKER_SUFFIX = '.break';
/** The file a process holds while it removes a stale `lock` (see {@link acquireSessionLock}). */
const LOCK_BREAKER_FILE = `${LOCK_FILE}${BREAKER_SUFFIX}`;
// A lock file still empty after this long was left by a writer killed while creating it (an
// older version created the lock empty, then wrote its holder).
const STALE_EMPTY_MS = 10_000;
const POLL_MS = 100;

interface Holder {
  pid: number;
  host: string;
  startedAt: string;
}

/** Options of {@link acquireSessionLock}. */
export interface LockOptions {
  /** How long to wait for another writer to finish (default 0: fail at once). */
  waitMs?: number;
  /** Called once when the lock is busy and the caller waits (e.g. to print a line). */
  onWait?: (message: string) => void;
  /** The lock file's name in the directory (default `lock`). */
  name?: string;
  /** The error when the lock stays busy, instead of one naming the holder and the directory. */
  busyMessage?: string;
}

/** A held lock; release it when done (it is also released when the process exits). */
export interface SessionLock {
  release(): void;
}

const held = new Set<string>();
// The exact text of each lock this process holds, so it never removes another's.
const ours = new Map<string, string>();
let exitHookInstalled = false;

function releaseAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const file of held) removeIfOurs(file);
  });
}

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

function readHolder(file: string): { raw: string; holder: Holder | undefined } | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fsError(file, 'read the session lock', e);
  }
  try {
    const h = JSON.parse(raw) as Holder;
    return { raw, holder: typeof h.pid === 'number' && typeof h.host === 'string' ? h : undefined };
  } catch {
    return { raw, holder: undefined };
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function isStale(file: string, seen: { raw: string; holder: Holder | undefined }): boolean {
  const { holder } = seen;
  if (!holder) return ageMs(file) > STALE_EMPTY_MS;
  if (holder.host !== hostname()) return false;
  // Our own pid on a lock this process never took: an earlier process with the same pid (a
  // restarted container's first process) was killed holding it.
  if (holder.pid === process.pid) return ![...ours.values()].includes(seen.raw);
  return !processAlive(holder.pid);
}

/** Removes a stale lock unless someone replaced it meanwhile (checked under `lock.break`). */
function breakStale(file: string, seen: string): void {
  const breaker = `${file}${BREAKER_SUFFIX}`;
  // The breaker names its process like a lock does, so one left by a process killed while
  // breaking is seen as stale at once instead of holding every opener for STALE_EMPTY_MS.
  if (tryCreate(breaker) === undefined) {
    const other = readHolder(breaker);
    if (other !== undefined && isStale(breaker, other)) unlinkIfUnchanged(breaker, other.raw);
    else sleepSync(POLL_MS);
    return;
  }
  try {
    unlinkIfUnchanged(file, seen);
  } finally {
    unlinkQuiet(breaker);
  }
}

/** Removes `file` if it still holds `raw`. */
function unlinkIfUnchanged(file: string, raw: string): void {
  if (readHolder(file)?.raw === raw) unlinkQuiet(file);
}

function unlinkQuiet(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* already gone */
  }
}

function removeIfOurs(file: string): void {
  if (readHolder(file)?.raw === ours.get(file)) unlinkQuiet(file);
  held.delete(file);
  ours.delete(file);
}

function describe(holder: Holder | undefined): string {
  if (!holder) return 'a process that is still creating its lock';
  const self = holder.pid === process.pid && holder.host === hostname() ? ', this process' : '';
  return `process ${holder.pid} on ${holder.host} (since ${holder.startedAt}${self})`;
}

/**
 * The name a process writes its lock under before linking it into place; one left by a process
 * killed in between is litter the store accepts (see {@link isLockFile}) and the same pid
 * overwrites.
 */
const creatingName = (file: string, pid: number) => `${file}.${pid}.tmp`;

function tryCreate(file: string): string | undefined {
  const raw = `${JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() })}\n`;
  // Written whole under a name of its own, then linked to `lock` (which fails if it exists, as
  // O_EXCL would): a process killed while taking the lock never leaves an empty lock whose
  // holder no one can tell, which held the session for ten seconds. No fsync: other processes
  // read the lock from the page cache, and after a crash of the machine its holder is gone, so
  // a lost lock is taken as free or stale as it should. The proxy opens sessions on its request
  // path, where an fsync held every request for ms.
  const creating = creatingName(file, process.pid);
  try {
    writeFileSync(creating, raw, { mode: PRIVATE_FILE });
  } catch (e) {
    throw fsError(file, 'create the session lock', e);
  }
  try {
    linkSync(creating, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw fsError(file, 'create the session lock', e);
  } finally {
    unlinkQuiet(creating);
  }
  return raw;
}

/** Whether a file of a session directory is the lock's own: the lock, its breaker, either being created. */
export function isLockFile(name: string): boolean {
  return name === LOCK_FILE || name === LOCK_BREAKER_FILE || /^lock(\.break)?\.\d+\.tmp$/.test(name);
}

/**
 * Takes the writer lock of `dir`, waiting up to `waitMs` for another writer; throws a
 * one-line {@link UserError} naming the holder when it stays busy.
 */
export function acquireSessionLock(dir: string, options: LockOptions = {}): SessionLock {
  const file = join(dir, options.name ?? LOCK_FILE);
  const deadline = Date.now() + (options.waitMs ?? 0);
  let announced = false;
  for (;;) {
    const raw = tryCreate(file);
    if (raw !== undefined) {
      ours.set(file, raw);
      held.add(file);
      releaseAllOnExit();
      return { release: () => removeIfOurs(file) };
    }
    const seen = readHolder(file);
    if (seen === undefined) continue; // released between our attempt and the read
    if (isStale(file, seen)) {
      breakStale(file, seen.raw);
      continue;
    }
    const who = describe(seen.holder);
    if (Date.now() >= deadline && options.busyMessage !== undefined) throw new UserError(options.busyMessage);
    if (Date.now() >= deadline)
      throw new UserError(
        `${dir}: session directory is in use by ${who}; wait for it to finish or pass --wait SECONDS`,
      );
    if (!announced) options.onWait?.(`waiting for ${dir}: in use by ${who}`);
    announced = true;
    sleepSync(POLL_MS);
  }
}
