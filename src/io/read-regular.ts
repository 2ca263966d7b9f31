import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { UserError } from '../core/errors.js';
import { fsErrorMessage } from './fs-errors.js';

/**
 * Reads an input file only when it is a regular file of bounded size: a device
 * (`/dev/urandom`), a FIFO or a socket would block or never end, and `/proc`/`/sys` files
 * report a size that is not what reading returns. The size cap is checked from the open
 * file's own metadata before reading, and reading stops at that size even if the file grows.
 */
export function readRegularFile(path: string, what: string, maxBytes: number, displayName = path): Buffer {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    throw new UserError(`${displayName}: cannot read ${what}: ${fsErrorMessage(e)}`);
  }
  if (/^\/(proc|sys|dev)(\/|$)/.test(real))
    throw new UserError(`${displayName}: not a regular file (${real} is a system file), expected a ${what}`);
  let fd: number | undefined;
  try {
    // Non-blocking: opening a FIFO with no writer must not hang before the check below.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new UserError(`${displayName}: is a directory, expected a ${what}`);
    if (!st.isFile())
      throw new UserError(`${displayName}: not a regular file (device, FIFO or socket), expected a ${what}`);
    if (st.size > maxBytes)
      throw new UserError(
        `${displayName}: file is ${st.size} bytes, larger than the ${maxBytes}-byte limit for a ${what}`,
      );
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } catch (e) {
    if (UserError.isInstance(e)) throw e;
    throw new UserError(`${displayName}: cannot read ${what}: ${fsErrorMessage(e)}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** {@link readRegularFile} as strict UTF-8 text. */
export function readRegularText(path: string, what: string, maxBytes: number, displayName = path): string {
  const buf = readRegularFile(path, what, maxBytes, displayName);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new UserError(`${displayName}: not valid UTF-8 text, expected a ${what}`);
  }
}
