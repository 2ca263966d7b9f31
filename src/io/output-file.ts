import {
  closeSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UserError } from '../core/errors.js';
import { writeFileAtomic } from './atomic-write.js';

/** What an output path is once symbolic links are followed. */
type OutputKind = 'none' | 'file' | 'stream' | 'directory' | 'socket' | 'block device';

function kindOf(st: Stats | undefined): OutputKind {
  if (st === undefined) return 'none';
  if (st.isFile()) return 'file';
  if (st.isFIFO() || st.isCharacterDevice()) return 'stream';
  if (st.isDirectory()) return 'directory';
  if (st.isSocket()) return 'socket';
  return 'block device';
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** The descriptor `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N` names, if one. */
function namedDescriptor(path: string): number | undefined {
  const std = { '/dev/stdin': 0, '/dev/stdout': 1, '/dev/stderr': 2 }[path];
  if (std !== undefined) return std;
  const m = /^\/(?:dev|proc\/self)\/fd\/(\d{1,4})$/.exec(path);
  return m ? Number(m[1]) : undefined;
}

/** What `path` is, following symbolic links (`none` when nothing is there yet). */
export function outputKind(path: string): OutputKind {
  // A descriptor the process already has open is written into, whatever it is (a socket too).
  if (namedDescriptor(path) !== undefined) return 'stream';
  return kindOf(statOrUndefined(path));
}

/**
 * Refuses an output path no file can be written to: a directory, a socket or a block device.
 * A FIFO or character device (`/dev/stdout`) is fine: it is written into as a stream.
 */
export function refuseSpecialOutput(label: string, path: string): void {
  const kind = outputKind(path);
  if (kind === 'directory' || kind === 'socket' || kind === 'block device')
    throw new UserError(`${label}: ${path} is a ${kind}, not a file`);
}

/**
 * The file a symbolic link leads to, even when that file does not exist yet (a dangling link is
 * written through, creating its target). A path that is not a link is itself.
 */
function linkTarget(path: string): string {
  let p = path;
  for (let hops = 0; hops < 40; hops++) {
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch {
      return p; // nothing there yet: this is the file to create
    }
    if (!st.isSymbolicLink()) return realpathSync(p);
    p = resolve(dirname(p), readlinkSync(p));
  }
  throw Object.assign(new UserError(`${path}: too many levels of symbolic links`), { code: 'ELOOP' });
}

const pause = (): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
};

function writeAll(fd: number, data: Buffer): void {
  let off = 0;
  while (off < data.length) {
    try {
      off += writeSync(fd, data, off, data.length - off);
    } catch (e) {
      // A non-blocking pipe or socket that is full for now: wait for the reader.
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      pause();
    }
  }
}

function writeStream(path: string, data: Buffer): void {
  const own = namedDescriptor(path);
  if (own !== undefined) return writeAll(own, data);
  const fd = openSync(path, 'w');
  try {
    writeAll(fd, data);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a command's output to `path` the way a user means it: a regular file (or a new one) is
 * replaced atomically, keeping its permissions; a symbolic link is written through (its target
 * is replaced, the link stays); a FIFO or character device (`/dev/stdout`, a pipe) is written
 * into as a stream, never replaced by a file. Errors (a full device, permission) are thrown as
 * they are, for the caller to put in one line.
 */
export function writeOutputFile(path: string, data: string | Uint8Array): void {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  const st = statOrUndefined(path);
  const kind = namedDescriptor(path) !== undefined ? 'stream' : kindOf(st);
  if (kind === 'stream') return writeStream(path, buf);
  if (kind !== 'file' && kind !== 'none') throw new UserError(`${path} is a ${kind}, not a file`);
  writeFileAtomic(linkTarget(path), buf, st ? { keepMode: st.mode & 0o7777 } : { mode: 0o644 });
}
