import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/*
 * The agent CLIs driven headless through the proxy, Claude Code and Codex: installed from npm
 * on first use into a cache directory outside the repository (a few hundred megabytes each,
 * and no dependency of the package), then reused.
 */

/** The Claude Code release the agent-CLI test and the bench run. */
export const CLAUDE_CODE_PACKAGE = '@anthropic-ai/claude-code@2.1.332';

/** The Codex release the agent-CLI test runs. */
export const CODEX_PACKAGE = '@openai/codex@0.171.0';

export function cacheDir(pkg: string, env: NodeJS.ProcessEnv): string {
  const [, name, version] = /^@[^/]+\/([^@]+)@(.+)$/.exec(pkg) ?? [];
  return join(
    env.COMPACTOR_AGENT_CLI_DIR ?? join(homedir(), '.cache', 'context-compactor', 'agent-cli'),
    `${name}-${version}`,
  );
}

/** Installs `pkg` into its cache directory (no-op when `installed` is there already). */
export async function installOnce(pkg: string, dir: string, installed: string): Promise<string> {
  if (existsSync(installed)) return installed;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
  await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--no-save', pkg], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (!existsSync(installed)) throw new Error(`${pkg} installed nothing at ${installed}`);
  return installed;
}

/** The `claude` executable, installing the pinned release first when it is missing. */
export async function ensureClaudeCode(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = cacheDir(CLAUDE_CODE_PACKAGE, env);
  // The wrapper package copies the platform's native binary over its placeholder in a
  // postinstall script; the platform package's own binary works whether or not that ran.
  const platform = `claude-code-${process.platform}-${process.arch}`;
  return installOnce(
    CLAUDE_CODE_PACKAGE,
    dir,
    join(dir, 'node_modules', '@anthropic-ai', platform, 'claude'),
  );
}

/** Codex's launcher script (run with node; it finds its platform's native binary itself), installing it first when missing. */
export async function ensureCodex(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = cacheDir(CODEX_PACKAGE, env);
  return installOnce(CODEX_PACKAGE, dir, join(dir, 'node_modules', '@openai', 'codex', 'bin', 'codex.js'));
}

/**
 * `codex exec` against a local endpoint: the base URL as config (Codex 0.171 does not read
 * OPENAI_BASE_URL), a dummy key, a Codex home of its own (it must exist), and no analytics.
 */
export function codexRun(
  prompt: string,
  model: string,
  baseUrl: string,
  home: string,
): { args: string[]; env: NodeJS.ProcessEnv } {
  mkdirSync(join(home, 'codex'), { recursive: true });
  return {
    args: [
      'exec',
      '--skip-git-repo-check',
      '-m',
      model,
      '-c',
      `openai_base_url="${baseUrl}"`,
      '-c',
      'analytics.enabled=false',
      prompt,
    ],
    env: {
      PATH: process.env.PATH,
      HOME: home,
      CODEX_HOME: join(home, 'codex'),
      OPENAI_API_KEY: 'sk-test-not-a-real-key',
    },
  };
}

/**
 * The environment Claude Code runs in against a local endpoint: a dummy key, no telemetry,
 * error reports, update checks or other traffic beside the model requests, and a home of its own
 * so it reads no user settings and writes its session files outside the user's.
 */
export function claudeCodeEnv(
  baseUrl: string,
  home: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...extra,
  };
}

/** The headless run's arguments: one prompt, JSON result, only the Read tool, our system prompt. */
export function claudeCodeArgs(prompt: string, system: string, model: string): string[] {
  return [
    '-p',
    prompt,
    '--output-format',
    'json',
    '--bare',
    '--tools',
    'Read',
    '--allowedTools',
    'Read',
    '--system-prompt',
    system,
    '--model',
    model,
  ];
}

/** Runs one headless agent CLI to its end (no standard input); `result` is its stdout parsed as JSON, if it is. */
export function runAgentCli(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; result: Record<string, unknown> | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      let result: Record<string, unknown> | null = null;
      try {
        result = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        // Not JSON (Codex prints text): the caller reads stdout.
      }
      resolve({ code, result, stdout, stderr });
    });
  });
}
