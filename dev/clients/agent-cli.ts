import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/*
 * Claude Code, the agent CLI driven headless through the proxy: installed from npm on first use
 * into a cache directory outside the repository (it is a few hundred megabytes, and no
 * dependency of the package), then reused.
 */

/** The Claude Code release the agent-CLI test and the bench run. */
export const CLAUDE_CODE_PACKAGE = '@anthropic-ai/claude-code@2.1.332';

function cacheDir(env: NodeJS.ProcessEnv): string {
  const version = CLAUDE_CODE_PACKAGE.split('@').pop() ?? '';
  return join(
    env.COMPACTOR_AGENT_CLI_DIR ?? join(homedir(), '.cache', 'context-compactor', 'agent-cli'),
    `claude-code-${version}`,
  );
}

/** The `claude` executable, installing the pinned release first when it is missing. */
export async function ensureClaudeCode(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = cacheDir(env);
  // The wrapper package copies the platform's native binary over its placeholder in a
  // postinstall script; the platform package's own binary works whether or not that ran.
  const native = join(
    dir,
    'node_modules',
    '@anthropic-ai',
    `claude-code-${process.platform}-${process.arch}`,
    'claude',
  );
  if (existsSync(native)) return native;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
  await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--no-save', CLAUDE_CODE_PACKAGE], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (!existsSync(native))
    throw new Error(`${CLAUDE_CODE_PACKAGE} installed no binary for ${process.platform}-${process.arch}`);
  return native;
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

/** Runs one headless `claude -p` to its end (no standard input) and parses its JSON result. */
export function runClaudeCode(
  claude: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; result: Record<string, unknown> | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(claude, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
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
        stderr += `\n(stdout was not JSON: ${stdout.slice(0, 200)})`;
      }
      resolve({ code, result, stderr });
    });
  });
}
