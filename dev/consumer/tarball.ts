import { join } from 'node:path';
import { sh } from './shell.js';

/** One `npm pack --json` result. */
export interface Packed {
  /** Absolute path of the .tgz. */
  file: string;
  /** Compressed size in bytes. */
  size: number;
  unpackedSize: number;
  files: string[];
}

/** Packs the repository into `dest` without lifecycle scripts (the caller builds first). */
export function pack(repoRoot: string, dest: string): Packed {
  const out = sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], {
    cwd: repoRoot,
  });
  const [info] = JSON.parse(out.stdout) as Array<{
    filename: string;
    size: number;
    unpackedSize: number;
    files: Array<{ path: string }>;
  }>;
  return {
    file: join(dest, info.filename),
    size: info.size,
    unpackedSize: info.unpackedSize,
    files: info.files.map((f) => f.path),
  };
}

// What must never ship: tests, fixtures, development tools, CI, configs, examples.
const FORBIDDEN: Array<[RegExp, string]> = [
  [/^(test|tests|dev|examples|coverage|\.ci|\.github|node_modules)\//, 'a development folder'],
  [/(^|\/)(__tests__|fixtures?)\//, 'tests or fixtures'],
  [/\.(test|spec)\.[cm]?[jt]s(\.map)?$/, 'a test file'],
  [/^(jest|eslint|prettier)\.config\./, 'a tool config'],
  [/^tsconfig.*\.json$/, 'a tsconfig'],
  [/\.tsbuildinfo$/, 'a build cache'],
  [/^(dist\/)?(dev|test)\//, 'compiled development code'],
];

/**
 * Problems with the tarball's contents: anything forbidden, and any exports target, types
 * file or bin that is missing from it.
 */
export function tarballProblems(packed: Packed, pkg: PackageJson): string[] {
  const problems: string[] = [];
  const have = new Set(packed.files);
  for (const f of packed.files) {
    const hit = FORBIDDEN.find(([re]) => re.test(f));
    if (hit) problems.push(`${f}: ${hit[1]} must not ship`);
  }
  const needed = [
    ...Object.values(pkg.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t))),
    ...Object.values(pkg.bin ?? {}),
    'README.md',
    'LICENSE',
  ].map((p) => p.replace(/^\.\//, ''));
  for (const p of needed)
    if (!have.has(p)) problems.push(`${p}: named in package.json but not in the tarball`);
  return problems;
}

/** The parts of package.json the consumer test reads. */
export interface PackageJson {
  name: string;
  version: string;
  exports: Record<string, string | Record<string, string>>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  engines?: { node?: string };
}
