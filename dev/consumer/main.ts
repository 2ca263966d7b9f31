import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  bundleAndRun,
  importEntries,
  installedPackage,
  installNode,
  lintPackage,
  runBin,
  runTestingExample,
  typecheck,
  type Places,
} from './checks.js';
import { installServePeer, runServe, serveWithoutPeer } from './serve-check.js';
import { adapterTests, frameworks, installFramework, runFramework } from './frameworks.js';
import { indent, sh } from './shell.js';
import { pack, tarballProblems, type PackageJson } from './tarball.js';

/**
 * The consumer test (`npm run test:consumer`; a step of .ci/run): packs the package, installs
 * the tarball into a temporary project outside the repository (no devDependencies), and
 * checks it the way a user would meet it: (a) every exports entry imports from plain node,
 * a projection runs, the bin works; (b) a consumer type-checks under strict nodenext and
 * bundler tsconfigs; (c) an esbuild bundle of it runs; (d) publint and Are the Types Wrong
 * pass; (e) the tarball holds no tests, fixtures or dev code; (f) (a) again under Node 22 and 24
 * (the `node` npm package); (g) each framework adapter in its own fresh project with only
 * that framework installed, running the README's example for it under Node 20, 22 and 24; (h) the repository's
 * adapter tests under Node 24; (i) the README's example of testing your own actors with
 * `context-compactor/testing`; (j) `compactor serve` from the installed bin relays a request to a
 * fake model and exits 0 on SIGTERM, under Node 20, 22 and 24. Exit code 1 when any check fails.
 */
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const fixtureDir = fileURLToPath(new URL('./app/', import.meta.url));
const SESSION = join(repoRoot, 'examples', 'sessions', 'django__django-16560.traj.json');
/** Node majors tested besides the running one; the `node` npm package ships each binary. */
const OTHER_NODE_MAJORS = [22, 24];

const { values } = parseArgs({
  options: { 'no-build': { type: 'boolean' }, keep: { type: 'boolean' } },
  strict: true,
});

let failed = 0;
let passed = 0;
async function step(
  title: string,
  fn: () => string | string[] | Promise<string | string[]>,
): Promise<boolean> {
  const t0 = Date.now();
  try {
    const detail = await fn();
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    passed++;
    console.log(`✔ ${title} (${secs} s)`);
    for (const d of [detail].flat()) if (d) console.log(indent(d));
    return true;
  } catch (e) {
    failed++;
    console.log(`✘ ${title}`);
    console.log(indent((e as Error).message));
    return false;
  }
}

const repoPkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as PackageJson;
const work = mkdtempSync(join(tmpdir(), 'compactor-consumer-'));
const app = join(work, 'app');
const places: Places = { repoRoot, app, sessionFile: SESSION };
console.log(`consumer test of ${repoPkg.name}@${repoPkg.version} in ${work} (node ${process.version})`);

try {
  if (!values['no-build'])
    await step('build', () => (sh('npm', ['run', 'build'], { cwd: repoRoot }), 'dist/'));
  let tarball = '';
  const packedOk = await step('(e) npm pack: contents', () => {
    const packed = pack(repoRoot, work);
    tarball = packed.file;
    const problems = tarballProblems(packed, repoPkg);
    if (problems.length > 0) throw new Error(problems.join('\n'));
    const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
    return `${packed.files.length} files, ${kb(packed.size)} packed, ${kb(packed.unpackedSize)} unpacked; no tests, fixtures, dev code or configs`;
  });
  const installed =
    packedOk &&
    (await step('install the tarball into an empty project', () => {
      mkdirSync(app);
      writeFileSync(
        join(app, 'package.json'),
        JSON.stringify({ name: 'compactor-consumer', private: true, type: 'module' }, null, 2),
      );
      for (const f of [
        'import-entries.mjs',
        'consumer.ts',
        'tsconfig.nodenext.json',
        'tsconfig.bundler.json',
      ])
        copyFileSync(join(fixtureDir, f), join(app, f));
      // The consumer's own @types/node (the same version we build against): our declarations
      // name Node types, as any Node library's do.
      const typesNode = repoPkg.devDependencies?.['@types/node'];
      sh('npm', ['install', '--no-audit', '--no-fund', tarball, `@types/node@${typesNode}`], { cwd: app });
      const pkg = installedPackage(app, repoPkg.name);
      return `${repoPkg.name}@${pkg.version} with ${Object.keys(pkg.dependencies ?? {}).length} runtime dependencies; entries: ${Object.keys(pkg.exports).join(' ')}`;
    }));
  if (installed) {
    const pkg = installedPackage(app, repoPkg.name);
    await step(`(a) node ${process.version}: import every exports entry, project a session`, () =>
      importEntries(places, process.execPath),
    );
    await step(`(a) node ${process.version}: the installed bin`, () => runBin(places, pkg, process.execPath));
    await step(`(k) compactor serve without its optional peer says what to install, then install it`, () => [
      serveWithoutPeer(places, pkg, process.execPath),
      installServePeer(places, repoPkg),
    ]);
    await step(`(j) node ${process.version}: compactor serve from the installed bin`, () =>
      runServe(places, pkg, process.execPath),
    );
    await step(`(i) node ${process.version}: examples/testing-own-actors.ts from the tarball`, () =>
      runTestingExample(places, process.execPath),
    );
    // The slow, independent steps overlap: two tsc runs and the other Node installs.
    const nodes = new Map<number, string>();
    const withFramework = new Map<string, string>();
    await Promise.all([
      ...frameworks(repoPkg).map((fw) =>
        step(`(g) a fresh project with the tarball and only ${fw.packages.join(' + ')}`, async () => {
          withFramework.set(fw.entry, await installFramework(work, repoRoot, tarball, fw));
          return '';
        }),
      ),
      step('(b) type-check a strict consumer: module nodenext', () =>
        typecheck(places, 'tsconfig.nodenext.json'),
      ),
      step('(b) type-check a strict consumer: moduleResolution bundler', () =>
        typecheck(places, 'tsconfig.bundler.json'),
      ),
      ...OTHER_NODE_MAJORS.map((major) =>
        step(`(f) install node@${major} from npm`, async () => {
          const node = await installNode(join(work, `node${major}`), major);
          nodes.set(major, node);
          return `${node} → ${sh(node, ['--version'], { cwd: work }).stdout.trim()}`;
        }),
      ),
    ]);
    await step('(c) esbuild bundle (platform node, esm) of the consumer, run', () =>
      bundleAndRun(places, pkg),
    );
    for (const [major, node] of nodes) {
      await step(`(f) node ${major}: import every exports entry, project a session`, () =>
        importEntries(places, node),
      );
      await step(`(f) node ${major}: the installed bin`, () => runBin(places, pkg, node));
      await step(`(j) node ${major}: compactor serve from the installed bin`, () =>
        runServe(places, pkg, node),
      );
    }
    const binaries: Array<[string, string]> = [
      [process.version, process.execPath],
      ...[...nodes].map(([major, node]): [string, string] => [`${major}`, node]),
    ];
    // The agent loops and the adapter tests are independent: they overlap.
    await Promise.all([
      ...binaries.flatMap(([version, node]) =>
        frameworks(repoPkg).map((fw) => {
          const dir = withFramework.get(fw.entry);
          return dir === undefined
            ? undefined
            : step(`(g) node ${version}: examples/${fw.entry}.ts from the tarball`, () =>
                runFramework(dir, fw, node),
              );
        }),
      ),
      ...[...nodes].map(([major, node]) =>
        step(`(h) node ${major}: the adapter tests (jest test/adapters)`, () => adapterTests(repoRoot, node)),
      ),
    ]);
  }
  if (packedOk)
    await step('(d) publint and Are the Types Wrong (esm-only)', () => lintPackage(places, tarball));
} finally {
  if (values.keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(`consumer test: ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
