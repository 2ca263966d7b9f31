import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { decodeTokens, encodeTokens } from './prompt-audit.js';

/** The repository's own TypeScript sources, in a fixed order: what `read_file` returns slices of. */
function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts')) out.push(path);
    }
  };
  walk(root);
  return out;
}

/** Deterministic source-like tool output: slices of the repository's `src/` of an exact token size. */
export interface SourceText {
  /** Paths a loop's `read_file` calls name, in order. */
  paths: string[];
  /** The text of read number `n`, `tokens` long in o200k (differs from read to read). */
  read(n: number, tokens: number): string;
}

let cached: { paths: string[]; tokens: Uint32Array } | undefined;

export function sourceText(root = join(process.cwd(), 'src')): SourceText {
  if (!cached) {
    const files = sourceFiles(root);
    const corpus = files
      .map((f) => `// ${relative(process.cwd(), f)}\n${readFileSync(f, 'utf8')}`)
      .join('\n');
    cached = { paths: files.map((f) => relative(process.cwd(), f)), tokens: encodeTokens(corpus) };
  }
  const { paths, tokens: all } = cached;
  return {
    paths,
    read(n, tokens) {
      // A different start for every read (a large odd stride), wrapping around the corpus.
      const start = (n * 7_919 + 1_013) % all.length;
      const picked = new Uint32Array(tokens);
      for (let i = 0; i < tokens; i++) picked[i] = all[(start + i) % all.length];
      return decodeTokens(picked);
    },
  };
}
