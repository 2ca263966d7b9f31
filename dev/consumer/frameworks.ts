import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { shAsync } from './shell.js';
import type { PackageJson } from './tarball.js';

/** One framework adapter entry and the packages a user installs for it (nothing else). */
export interface Framework {
  /** The adapter's exports entry, e.g. `ai-sdk` for `context-compactor/ai-sdk`. */
  entry: string;
  packages: string[];
}

/** The adapter entries with their frameworks, at the versions the repository tests. */
export function frameworks(repoPkg: PackageJson): Framework[] {
  const version = (name: string) => {
    const v = repoPkg.devDependencies?.[name];
    if (v === undefined) throw new Error(`package.json: no devDependency ${name} to test the adapter with`);
    return `${name}@${v}`;
  };
  return [
    { entry: 'ai-sdk', packages: [version('ai')] },
    { entry: 'langchain', packages: [version('langchain'), version('@langchain/core')] },
    { entry: 'openai-agents', packages: [version('@openai/agents')] },
  ];
}

const MIN_CALLS = 30;
const EXAMPLE_SESSION = join('examples', 'sessions', 'django__django-16560.traj.json');
const ALL_FRAMEWORK_PACKAGES = ['ai', 'langchain', '@langchain/core', '@openai/agents'];

/**
 * (g) A fresh project holding the tarball and one framework only, with the README's example
 * for that framework (compiled to JavaScript by esbuild; Node 20 runs no TypeScript) and the
 * session it replays; returns its directory. Fails when another framework got installed too.
 */
export async function installFramework(
  work: string,
  repoRoot: string,
  tarball: string,
  fw: Framework,
): Promise<string> {
  const dir = join(work, `with-${fw.entry}`);
  mkdirSync(join(dir, 'examples', 'sessions'), { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: `consumer-${fw.entry}`, private: true, type: 'module' }),
  );
  for (const name of [fw.entry, 'real-session']) {
    const source = readFileSync(join(repoRoot, 'examples', `${name}.ts`), 'utf8');
    const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'node20' });
    writeFileSync(join(dir, 'examples', `${name}.js`), code);
  }
  copyFileSync(join(repoRoot, EXAMPLE_SESSION), join(dir, EXAMPLE_SESSION));
  await shAsync('npm', ['install', '--no-audit', '--no-fund', tarball, ...fw.packages], { cwd: dir });
  const own = fw.packages.map((p) => p.slice(0, p.lastIndexOf('@')));
  const others = ALL_FRAMEWORK_PACKAGES.filter(
    (p) => !own.includes(p) && existsSync(join(dir, 'node_modules', p)),
  );
  if (others.length > 0) throw new Error(`${dir}: other frameworks got installed too: ${others.join(', ')}`);
  return dir;
}

/**
 * (g) Runs the framework's example (a 32-step agent loop over a real session) with `node`;
 * fails unless every model call stayed inside the window while the whole conversation outgrew it.
 */
export async function runFramework(dir: string, fw: Framework, node: string): Promise<string> {
  const out = (await shAsync(node, [join('examples', `${fw.entry}.js`)], { cwd: dir })).stdout;
  const m =
    /largest prompt the model got was (\d+) tokens \(window (\d+)\) over (\d+) model calls;\s*Compactor keeps (\d+) messages/.exec(
      out,
    );
  // Each example says how large the whole conversation grew ("grew to N tokens", "holds M items, N tokens").
  const grown = /(?:grew to|holds \d+ \w+,) (\d+) tokens/.exec(out);
  if (!m || !grown) throw new Error(`examples/${fw.entry}.ts printed no verdict:\n${out.slice(-600)}`);
  const [largest, window, calls, kept] = m.slice(1).map(Number);
  const total = Number(grown[1]);
  const line = `${calls} model calls, conversation ${total} tokens, largest prompt ${largest} of ${window} tokens, ${kept} messages kept`;
  // The bar: at least 30 steps, all inside the window, and a conversation that outgrew the
  // window — so every prompt fit only because Compactor compacted it.
  if (largest > window || calls < MIN_CALLS || total <= window)
    throw new Error(`examples/${fw.entry}.ts: ${line}`);
  return `${fw.packages.join(' + ')}: ${line}`;
}

/** (h) The repository's adapter tests (jest test/adapters) under another Node binary. */
export async function adapterTests(repoRoot: string, node: string): Promise<string> {
  const jest = join(repoRoot, 'node_modules', 'jest', 'bin', 'jest.js');
  const r = await shAsync(node, [jest, '--maxWorkers=1', 'test/adapters'], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules --disable-warning=ExperimentalWarning' },
  });
  return `${r.stderr}`
    .split('\n')
    .filter((l) => /^(PASS|Tests:)/.test(l))
    .join('\n');
}
