import { existsSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../io/atomic-write.js';

/**
 * The turn checkpoint as it is before a turn; the returned function puts it back (or removes
 * the one the turn wrote), so a cancelled turn leaves the session directory as it was.
 */
export function keepCheckpoint(path: string): () => void {
  const dirExisted = existsSync(dirname(path));
  const before = existsSync(path) ? readFileSync(path) : null;
  return () => {
    if (before !== null) return writeFileAtomic(path, before);
    rmSync(path, { force: true });
    if (!dirExisted) rmdirSync(dirname(path));
  };
}
