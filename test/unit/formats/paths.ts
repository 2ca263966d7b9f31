import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORPUS_ENV, sessionCorpusDir } from '../../../dev/bench/corpus.js';

/** The repository root (three levels above this file). */
export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** Hand-made format fixtures. */
export const fixture = (name: string): string => join(repoRoot, 'test/fixtures/formats', name);

/**
 * The shared real-session corpus, found the way the benchmark finds it ($COMPACTOR_CORPUS,
 * else ../shared/data/sessions/raw beside the repository). Suites that read it fail loudly
 * when it is missing rather than pass without it.
 */
export const rawDir = ((): string => {
  const dir = sessionCorpusDir();
  if (dir === null)
    throw new Error(`session corpus not found: set ${CORPUS_ENV} or lay out ../shared beside the repository`);
  return dir;
})();
