import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_CORPUS_DIR } from '#dev/bench/corpus.js';

/** The repository root (two levels above this file). */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Hand-made format fixtures. */
export const fixture = (name: string): string => join(repoRoot, 'test/fixtures/formats', name);

/** The real sessions bundled with the repository (never taken from the environment). */
export const rawDir = BUNDLED_CORPUS_DIR;
