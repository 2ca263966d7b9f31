import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Environment variable naming the session corpus directory (the `--corpus` flag wins). */
export const CORPUS_ENV = 'COMPACTOR_CORPUS';

/** The repository root (two levels above dev/bench). */
export const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * The real sessions that ship with the repository (permissively licensed, byte-identical to
 * their sources; see `test/fixtures/sessions/ATTRIBUTION.md`). Tests always read these, so a
 * clone needs nothing beside it.
 */
export const BUNDLED_CORPUS_DIR = join(repoRoot, 'test/fixtures/sessions/raw');

/**
 * Locates the session corpus: `--corpus DIR` (`flag`), else `$COMPACTOR_CORPUS`, else the
 * bundled sessions. A directory given explicitly must exist; it replaces the bundled set (lay
 * the bundled sessions beside your own in it to add to them).
 */
export function sessionCorpusDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = flag ?? (env[CORPUS_ENV] || undefined);
  if (given === undefined) return BUNDLED_CORPUS_DIR;
  const dir = resolve(given);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new Error(
      `corpus directory not found: ${given} (from ${flag !== undefined ? '--corpus' : CORPUS_ENV})`,
    );
  return dir;
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
