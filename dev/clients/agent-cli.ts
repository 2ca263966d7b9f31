import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { agentById } from '../agents/agents.js';
import { installAgent } from '../agents/install.js';

/*
 * The agent CLIs driven headless through the proxy, Claude Code and Codex: installed from npm
 * on first use into the agent matrix's cache outside the repository (dev/agents/install.ts; a
 * few hundred megabytes each, and no dependency of the package), then reused.
 */

const CLAUDE_CODE = agentById('claude-code-latest');
const CODEX = agentById('codex');

/** The Claude Code release the agent-CLI test and the bench run. */
export const CLAUDE_CODE_PACKAGE = CLAUDE_CODE.install.packages.at(-1)!;

/** The Codex release the agent-CLI test runs. */
export const CODEX_PACKAGE = CODEX.install.packages[0];

/** The `claude` executable (its platform's native binary), installing the pinned release first when it is missing. */
export async function ensureClaudeCode(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return join(await installAgent(CLAUDE_CODE, env), CLAUDE_CODE.install.bin);
}

/** Codex's launcher script (run with node; it finds its platform's native binary itself), installing it first when missing. */
export async function ensureCodex(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return join(await installAgent(CODEX, env), CODEX.install.bin);
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
