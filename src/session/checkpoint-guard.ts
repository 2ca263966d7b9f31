import { readFile, rm, rmdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomicAsync } from '../io/atomic-write.js';

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The turn checkpoint as it was before a turn replaced it (see {@link checkpointKeeper}). */
export interface CheckpointKeeper {
  /** Reads the checkpoint as it is, once; the turn calls it just before its first checkpoint write. */
  keep(): Promise<void>;
  /** Puts back what {@link CheckpointKeeper.keep} read (or removes the turn's); nothing when the turn wrote none. */
  restore(): Promise<void>;
}

/**
 * Keeps the turn checkpoint so a cancelled or refused turn leaves the session directory as it
 * was. The file is read only when the turn is about to write one (most turns write none, and
 * then there is nothing to put back), without blocking the event loop.
 */
export function checkpointKeeper(path: string): CheckpointKeeper {
  let kept: Promise<{ before: Buffer | null; dirExisted: boolean }> | undefined;
  const read = async () => ({
    dirExisted: await exists(dirname(path)),
    before: await readFile(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw e;
    }),
  });
  return {
    keep: async () => {
      await (kept ??= read());
    },
    async restore() {
      // A read that failed stopped the write it came before: nothing to put back.
      const was = kept && (await kept.catch(() => undefined));
      if (!was) return;
      if (was.before !== null) return writeFileAtomicAsync(path, was.before);
      await rm(path, { force: true });
      if (!was.dirExisted) await rmdir(dirname(path)).catch(() => undefined);
    },
  };
}
