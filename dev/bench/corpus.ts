import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Environment variable naming the session corpus directory (the `--corpus` flag wins). */
export const CORPUS_ENV = 'COMPACTOR_CORPUS';

/** The repository root (two levels above dev/bench). */
export const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** Where the corpus sits inside the shared folder that CI lays out beside the repository. */
const CORPUS_IN_SHARED = 'shared/data/sessions/raw';

/**
 * The default corpus: `../shared/data/sessions/raw` beside the repository (the CI layout). A
 * git worktree sits one or more folders deeper than the main checkout, so the folders above
 * are tried next, nearest first; null when none has it.
 */
export function defaultCorpusDir(root: string = repoRoot): string | null {
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    const candidate = join(dir, CORPUS_IN_SHARED);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * Locates the session corpus: `--corpus DIR` (`flag`), else `$COMPACTOR_CORPUS`, else the
 * default beside the repository (`defaultCorpusDir`). Tests, benchmarks and dev scripts all
 * use this one lookup. A directory given explicitly must exist; the default may be absent
 * (null: benches skip).
 */
export function sessionCorpusDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const given = flag ?? (env[CORPUS_ENV] || undefined);
  if (given !== undefined) {
    const dir = resolve(given);
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new Error(
        `corpus directory not found: ${given} (from ${flag !== undefined ? '--corpus' : CORPUS_ENV})`,
      );
    return dir;
  }
  return defaultCorpusDir();
}

/**
 * Every transcript file under the corpus directory (files at the top level and one level
 * down, as `raw/<source>/<file>`), sorted for stable output. Markdown notes about the
 * corpus (README, ATTRIBUTION, SOURCES) are skipped.
 */
export function corpusFiles(dir: string): string[] {
  const out: string[] = [];
  const isNote = (f: string) => /^(readme|attribution|sources|licen[cs]e)/i.test(f);
  for (const sub of readdirSync(dir).sort()) {
    const p = join(dir, sub);
    if (statSync(p).isDirectory()) {
      for (const f of readdirSync(p).sort())
        if (statSync(join(p, f)).isFile() && !isNote(f)) out.push(join(p, f));
    } else if (!isNote(sub)) out.push(p);
  }
  return out;
}
