import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Locates the shared session corpus: `../shared/data/sessions/raw` beside the repo (as CI
 * lays it out), else /work/shared. Returns null when absent so benches can skip.
 */
export function sessionCorpusDir(): string | null {
  const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
  for (const dir of [join(repoRoot, '../shared/data/sessions/raw'), '/work/shared/data/sessions/raw']) {
    if (existsSync(dir)) return dir;
  }
  return null;
}

/** Every transcript file under the corpus directory, sorted for stable output. */
export function corpusFiles(dir: string): string[] {
  const out: string[] = [];
  for (const sub of readdirSync(dir).sort()) {
    const p = join(dir, sub);
    if (statSync(p).isDirectory()) for (const f of readdirSync(p).sort()) out.push(join(p, f));
  }
  return out;
}
