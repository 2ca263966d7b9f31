import { UserError } from '../core/errors.js';

// Plain words for the file-system errors a user can cause or fix.
const CAUSES: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EEXIST: 'already exists',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  EIO: 'input/output error',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  EBUSY: 'resource busy',
  EFBIG: 'file too large',
  EXDEV: 'crosses a file-system boundary',
  ETXTBSY: 'file busy',
};

/** The cause of a file-system error in one line: "permission denied (EACCES)". */
export function fsErrorMessage(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code && CAUSES[code]) return `${CAUSES[code]} (${code})`;
  if (code) return code;
  return String((e as Error | undefined)?.message ?? e).split('\n')[0]!;
}

/** A one-line UserError (exit 2) naming the path and the cause: "PATH: cannot write: …". */
export function fsError(path: string, action: string, e: unknown): UserError {
  if (UserError.isInstance(e)) return e;
  return new UserError(`${path}: cannot ${action}: ${fsErrorMessage(e)}`);
}
