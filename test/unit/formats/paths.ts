import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (three levels above this file). */
export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** Hand-made format fixtures. */
export const fixture = (name: string): string => join(repoRoot, 'test/fixtures/formats', name);

/**
 * The shared real-session corpus: CI keeps shared/ beside the repo (../shared), the
 * workstation has it at /work/shared.
 */
export const rawDir = ((): string => {
  const beside = resolve(repoRoot, '../shared/data/sessions/raw');
  return existsSync(beside) ? beside : '/work/shared/data/sessions/raw';
})();
