import { readFile, rm, rmdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomicAsync } from '../io/atomic-write.js';

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * The turn checkpoint as it is before a turn; the returned function puts it back (or removes
 * the one the turn wrote), so a cancelled turn leaves the session directory as it was. Both
 * read and write without blocking the event loop (a checkpoint is a few kilobytes).
 */
export async function keepCheckpoint(path: string): Promise<() => Promise<void>> {
  const dirExisted = await exists(dirname(path));
  const before = await readFile(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  return async () => {
    if (before !== null) return writeFileAtomicAsync(path, before);
    await rm(path, { force: true });
    if (!dirExisted) await rmdir(dirname(path)).catch(() => undefined);
  };
}
