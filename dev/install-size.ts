import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sh } from './consumer/shell.js';
import { pack, type PackageJson } from './consumer/tarball.js';

/**
 * What an AI SDK user installs (`npm run install-size`): packs the package (build first),
 * installs the tarball with `ai` into an empty project, and the same project with `ai` alone,
 * then prints the packages `npm ls --all` lists and the size of node_modules for both and the
 * difference (what Compactor adds). Needs the npm registry.
 */
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { keep: { type: 'boolean' } }, strict: true });
const repoPkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as PackageJson;
const aiVersion = repoPkg.devDependencies?.ai;
if (!aiVersion) throw new Error('package.json: devDependencies has no `ai` version to install');

interface Installed {
  packages: number;
  bytes: number;
}

/** Installs `specs` into a fresh project under `dir` and measures node_modules. */
function install(dir: string, specs: string[]): Installed {
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'size-probe', private: true }));
  sh('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...specs], { cwd: dir });
  const listed = sh('npm', ['ls', '--all', '--parseable'], { cwd: dir, allowFailure: true }).stdout;
  // The first line is the project itself; each other line one installed package folder.
  const packages = new Set(listed.split('\n').slice(1).filter(Boolean)).size;
  const bytes = Number(sh('du', ['-sb', join(dir, 'node_modules')], { cwd: dir }).stdout.split('\t')[0]);
  return { packages, bytes };
}

const work = mkdtempSync(join(tmpdir(), 'compactor-size-'));
try {
  const tarball = pack(repoRoot, work).file;
  const alone = install(join(work, 'ai-only'), [`ai@${aiVersion}`]);
  const both = install(join(work, 'with-compactor'), [`ai@${aiVersion}`, tarball]);
  const ours = JSON.parse(
    readFileSync(join(work, 'with-compactor', 'node_modules', repoPkg.name, 'package.json'), 'utf8'),
  ) as PackageJson;
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(`${repoPkg.name}@${repoPkg.version} with ai@${aiVersion}`);
  console.log(`  runtime dependencies declared: ${Object.keys(ours.dependencies ?? {}).length}`);
  console.log(`  ai alone:        ${alone.packages} packages, ${mb(alone.bytes)}`);
  console.log(`  ai + compactor:  ${both.packages} packages, ${mb(both.bytes)}`);
  console.log(
    `  compactor adds:  ${both.packages - alone.packages} packages, ${mb(both.bytes - alone.bytes)}`,
  );
} finally {
  if (values.keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
