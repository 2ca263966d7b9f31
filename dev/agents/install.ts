import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { AGENTS, agentById, type AgentSpec } from './agents.js';

/*
 * Installs the agent CLIs of the matrix from npm into a cache outside the repository
 * (`$XDG_CACHE_HOME/compactor-agents/<name>@<version>`, or COMPACTOR_AGENTS_DIR), once: a
 * directory counts as installed when its `.installed` mark is there, written last, so an
 * install cut short is done again. `npx tsx dev/agents/install.ts [id …]` installs the named
 * agents (default all) and exits 1 when one failed.
 */

const MARK = '.installed';

/** Where the agents are cached. */
export function agentsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env.COMPACTOR_AGENTS_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'compactor-agents')
  );
}

/** The agent's install directory when it is installed, else undefined. */
export function installedAgent(spec: AgentSpec, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = join(agentsCacheDir(env), spec.install.dir);
  return existsSync(join(dir, MARK)) && existsSync(join(dir, spec.install.bin)) ? dir : undefined;
}

async function npmInstall(dir: string, packages: string[], name: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, private: true })}\n`);
  await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--no-save', ...packages], {
    cwd: dir,
    maxBuffer: 32 * 1024 * 1024,
  });
}

/** Installs an agent (no-op when it is installed); resolves to its install directory. */
export async function installAgent(spec: AgentSpec, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const done = installedAgent(spec, env);
  if (done) return done;
  const dir = join(agentsCacheDir(env), spec.install.dir);
  rmSync(dir, { recursive: true, force: true });
  await npmInstall(dir, spec.install.packages, `${spec.id}-install`);
  const { beside } = spec.install;
  if (beside) await npmInstall(join(dir, beside.sub), beside.packages, `${spec.id}-${beside.sub}`);
  if (!existsSync(join(dir, spec.install.bin)))
    throw new Error(`${spec.install.packages.join(' ')} installed no ${spec.install.bin}`);
  writeFileSync(join(dir, MARK), `${new Date().toISOString()}\n`);
  return dir;
}

async function main(ids: string[]): Promise<number> {
  const chosen = ids.length > 0 ? ids.map(agentById) : AGENTS;
  let failed = 0;
  for (const spec of chosen) {
    try {
      const dir = await installAgent(spec);
      process.stdout.write(`${spec.label}: ${dir}\n`);
    } catch (e) {
      failed++;
      process.stderr.write(`${spec.label}: install failed: ${(e as Error).message.split('\n')[0]}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  process.exitCode = await main(process.argv.slice(2));
