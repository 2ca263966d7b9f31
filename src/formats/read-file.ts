import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { UserError } from '../core/errors.js';
import { inputError } from './input-error.js';
import { fsErrorMessage } from '../io/fs-errors.js';
import { escapedJsonText } from './json-escape.js';

/**
 * Largest session file we read: 256 MiB. The largest real transcript in the corpus is
 * 2 MB; the limit keeps one file well under V8's ~512 MiB string ceiling and leaves heap
 * room for JSON.parse (which needs several times the text size), so a huge or runaway
 * file fails fast with a one-line error instead of an out-of-memory crash.
 */
export const MAX_SESSION_FILE_BYTES = 256 * 1024 * 1024;

// How much of the head is checked for NUL bytes before the whole file is read.
const SNIFF_BYTES = 64 * 1024;

/**
 * Reads a session file as UTF-8 text (errors name it `displayName`). Fails with a one-line error naming the file when it
 * is missing, a directory, too large, binary (NUL bytes) or not valid UTF-8.
 */
export function readSessionText(path: string, maxBytes = MAX_SESSION_FILE_BYTES, displayName = path): string {
  const name = displayName;
  const size = checkSessionFile(path, maxBytes, name);
  let buf: Buffer;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
    readSync(fd, head, 0, head.length, 0);
    checkNotBinary(head, name);
    buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    buf = buf.subarray(0, off);
  } catch (e) {
    if (UserError.isInstance(e)) throw e;
    throw inputError(name, `cannot read file: ${fsErrorMessage(e)}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  checkNotBinary(buf, name);
  const escaped = escapedJsonText(buf);
  if (escaped !== undefined) return escaped;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buf);
  } catch {
    throw inputError(name, 'not valid UTF-8 text (binary file?)');
  }
}

/**
 * The size of a session file after the checks every read makes first: it exists, is a regular
 * file (not a directory, device, FIFO or system file) and is within `maxBytes`.
 */
export function checkSessionFile(path: string, maxBytes: number, name: string): number {
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw inputError(name, 'is a directory, expected a session file');
    // Devices, FIFOs and sockets block or never end; /proc and /sys sizes are not what reads return.
    if (!st.isFile() || /^\/(proc|sys|dev)(\/|$)/.test(realpathSync(path)))
      throw inputError(
        name,
        'not a regular file (device, FIFO, socket or system file), expected a session file',
      );
    size = st.size;
  } catch (e) {
    if (UserError.isInstance(e)) throw e;
    throw inputError(name, `cannot read file: ${fsErrorMessage(e)}`);
  }
  if (size > maxBytes)
    throw inputError(
      name,
      `file is ${formatMiB(size)}, larger than the ${formatMiB(maxBytes)} limit for session files`,
    );
  return size;
}

function checkNotBinary(buf: Uint8Array, path: string): void {
  const at = buf.indexOf(0);
  if (at >= 0) throw inputError(path, `binary data (NUL byte at offset ${at}), expected a text session file`);
}

function formatMiB(n: number): string {
  return `${(n / (1024 * 1024)).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}
