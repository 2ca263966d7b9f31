import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentById } from '../agents/agents.js';
import { installAgent } from '../agents/install.js';

/*
 * Gemini CLI driven headless through the proxy (`gemini -p … -o stream-json`), installed from
 * npm on first use into the agent-CLI cache like the others.
 */

const GEMINI_CLI = agentById('gemini-cli');

/** The Gemini CLI release the agent-CLI test runs (the newest that runs on Node 20). */
export const GEMINI_CLI_PACKAGE = GEMINI_CLI.install.packages[0];

/** Gemini CLI's bundled script (run with node), installing it into the agent matrix's cache first when missing. */
export async function ensureGeminiCli(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return join(await installAgent(GEMINI_CLI, env), GEMINI_CLI.install.bin);
}

/**
 * Gemini CLI's environment: the base URL pointed at `baseUrl`, a dummy key, and a home whose
 * settings choose key auth (without it the CLI refuses to start) and turn off usage statistics,
 * telemetry and update checks (no call leaves the machine).
 */
export function geminiCliEnv(baseUrl: string, home: string, key: string): NodeJS.ProcessEnv {
  mkdirSync(join(home, '.gemini'), { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  };
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings));
  return {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'dumb',
    GEMINI_API_KEY: key,
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
}

/** The final answer of a `-o stream-json` run: its assistant messages joined. */
export function geminiCliAnswer(stdout: string): string {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type?: string; role?: string; content?: string })
    .filter((e) => e.type === 'message' && e.role === 'assistant')
    .map((e) => e.content ?? '')
    .join('');
}
