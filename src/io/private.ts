import { chmodSync, mkdirSync, statSync } from 'node:fs';

/**
 * Sessions hold whatever the agent read and wrote, secrets included: what Compactor stores is
 * readable by its owner only.
 */

/** Permissions of a stored file: the owner reads and writes it, nobody else. */
export const PRIVATE_FILE = 0o600;
/** Permissions of a store directory: only the owner may list or enter it. */
export const PRIVATE_DIR = 0o700;

/**
 * Creates `dir` (and its missing parents) owner-only, or tightens an existing one that others
 * may read or enter. Returns the old permissions when it tightened them, for a warning.
 */
export function privateDir(dir: string): number | undefined {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  const st = statSync(dir);
  const mode = st.mode & 0o777;
  // Only a directory of our own can be tightened; another user's is left as it is.
  if ((mode & 0o077) === 0 || (process.getuid !== undefined && st.uid !== process.getuid())) return undefined;
  chmodSync(dir, mode & ~0o077);
  return mode;
}
