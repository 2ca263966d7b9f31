import {
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { processAlive } from './process-alive.js';
import { PRIVATE_FILE } from './private.js';

/** How {@link writeFileAtomic} sets the new file's permissions. */
export interface AtomicWriteOptions {
  /** Permissions of a new file, less the umask (default 0600: only the owner reads it). */
  mode?: number;
  /** Exact permissions to give the file whatever the umask (those of the file it replaces). */
  keepMode?: number;
}

/**
 * Writes a file atomically: write a temp file in the same directory, fsync it,
 * rename it over the target, fsync the directory. A crash leaves the old file or the
 * new one, never a torn one, and a failed write leaves no partial output.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): void {
  const dir = dirname(path);
  removeStaleTemps(dir, basename(path));
  const tmp = tempName(path);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', options.mode ?? PRIVATE_FILE);
    if (options.keepMode !== undefined) fchmodSync(fd, options.keepMode);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* temp file may not exist */
    }
    throw e;
  }
  fsyncDir(dir);
}

/** The shape of the temp file names below (`.name.pid.time.rand.tmp`): what a killed writer leaves. */
export const ATOMIC_TEMP_NAME = /^\..+\.\d+\.\d+\.[0-9a-z]*\.tmp$/;

const tempName = (path: string) =>
  join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`,
  );

/**
 * {@link writeFileAtomic} without blocking the event loop: the same temp file, fsync, rename
 * and directory fsync, each awaited, so a server keeps answering other requests meanwhile.
 */
export async function writeFileAtomicAsync(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = tempName(path);
  let file;
  try {
    file = await open(tmp, 'wx', PRIVATE_FILE);
    await file.writeFile(data);
    await file.sync();
    await file.close();
    file = undefined;
    await rename(tmp, path);
  } catch (e) {
    await file?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fsyncDirAsync(dirname(path));
}

/** {@link fsyncDir} without blocking the event loop. */
async function fsyncDirAsync(dir: string): Promise<void> {
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    /* some filesystems refuse directory fsync */
  }
}

/** fsyncs a directory so a rename in it is durable (best effort where unsupported). */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    /* some filesystems refuse directory fsync */
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Removes temp files of earlier writes to `name` whose writer is gone (killed between
 * creating the temp file and renaming it), so crashes leave no litter behind.
 */
export function removeStaleTemps(dir: string, name: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return; // the write itself reports the directory's problem
  }
  const prefix = `.${name}.`;
  for (const f of entries) {
    if (!f.startsWith(prefix) || !f.endsWith('.tmp')) continue;
    const pid = Number(f.slice(prefix.length).split('.')[0]);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid)) {
      try {
        unlinkSync(join(dir, f));
      } catch {
        /* removed by someone else */
      }
    }
  }
}
