import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WireProtocol } from '../fakes/agent-upstream.js';

/*
 * The agent CLIs of the matrix, as a user has them after `npm install`: each with its default
 * system prompt, tools and output limit. A run gets a fresh home with only the settings that
 * let it run headless and offline (a key, the base URL, no telemetry, update checks or
 * other traffic beside the model), pointed at one root URL (the proxy, or the model).
 */

/** What `npm install` puts into an agent's cache directory, and the executable it runs. */
export interface AgentInstall {
  /** The directory name under the cache: `<name>@<version>`. */
  dir: string;
  packages: string[];
  /** Packages installed into `<dir>/<sub>` of their own (opencode's plugin for its config folder). */
  beside?: { sub: string; packages: string[] };
  /** The executable, relative to the install directory. */
  bin: string;
  /** Run the executable with this Node (relative to the install directory), not directly. */
  node?: string;
  /** A directory put first on PATH (the Node the agent was installed and runs with). */
  pathFirst?: string;
}

/** One run's places: the root URL it talks to, its home, and the folder it works in. */
export interface AgentRunPlaces {
  root: string;
  home: string;
  work: string;
  /** The install directory (absolute). */
  installed: string;
}

export interface AgentSpec {
  id: string;
  label: string;
  protocol: WireProtocol;
  install: AgentInstall;
  /** The agent's read tool and its arguments for an absolute path. */
  tool: { name: string; args(path: string): Record<string, unknown> };
  /** Arguments and environment of a headless run of `prompt` (writes its settings into the home). */
  start(prompt: string, at: AgentRunPlaces): { args: string[]; env: NodeJS.ProcessEnv };
}

const basePath = () => process.env.PATH ?? '/usr/bin:/bin';

function writeJson(path: string, value: unknown): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function claudeCode(id: string, version: string, node24?: string): AgentSpec {
  return {
    id,
    label: `Claude Code ${version}${node24 ? ` (Node ${node24})` : ''}`,
    protocol: 'anthropic',
    install: {
      dir: node24 ? `claude-code@${version}+node@${node24}` : `claude-code@${version}`,
      // Installed together, the npm `node` package's binary is the `node` the postinstall runs with.
      packages: [...(node24 ? [`node@${node24}`] : []), `@anthropic-ai/claude-code@${version}`],
      bin: 'node_modules/@anthropic-ai/claude-code-linux-x64/claude',
      ...(node24 ? { pathFirst: 'node_modules/node/bin' } : {}),
    },
    tool: { name: 'Read', args: (path) => ({ file_path: path }) },
    start: (prompt, at) => ({
      args: ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Read'],
      env: {
        HOME: at.home,
        TERM: 'dumb',
        ANTHROPIC_BASE_URL: at.root,
        ANTHROPIC_API_KEY: 'sk-ant-fake-key',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_BUG_COMMAND: '1',
        CLAUDE_CODE_ENABLE_TELEMETRY: '0',
      },
    }),
  };
}

const codex: AgentSpec = {
  id: 'codex',
  label: 'Codex 0.171.0',
  protocol: 'openai-responses',
  install: {
    dir: 'codex@0.171.0',
    packages: ['@openai/codex@0.171.0'],
    bin: 'node_modules/@openai/codex/bin/codex.js',
    node: process.execPath,
  },
  tool: { name: 'exec_command', args: (path) => ({ cmd: `cat ${path}` }) },
  start(prompt, at) {
    const codexHome = join(at.home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    // The provider block is how Codex reaches a custom endpoint; analytics and the plugin,
    // app and update checks are what would reach other hosts. No retries: an error shows at once.
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "fake-model"',
        'model_provider = "fake"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        'check_for_update_on_startup = false',
        '[analytics]',
        'enabled = false',
        '[features]',
        'plugins = false',
        'remote_plugin = false',
        'apps = false',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = "${at.root}/v1"`,
        'wire_api = "responses"',
        'env_key = "FAKE_OPENAI_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n'),
    );
    return {
      args: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt],
      env: { HOME: at.home, CODEX_HOME: codexHome, TERM: 'dumb', FAKE_OPENAI_KEY: 'sk-fake-key' },
    };
  },
};

const opencode: AgentSpec = {
  id: 'opencode',
  label: 'opencode 1.18.33',
  protocol: 'openai-chat',
  install: {
    dir: 'opencode@1.18.33',
    packages: ['opencode-ai@1.18.33'],
    beside: { sub: 'plugin', packages: ['@opencode-ai/plugin@1.18.33'] },
    bin: 'node_modules/opencode-linux-x64/bin/opencode',
  },
  tool: { name: 'read', args: (path) => ({ filePath: path }) },
  start(prompt, at) {
    const config = join(at.home, '.config', 'opencode');
    writeJson(join(config, 'opencode.json'), {
      $schema: 'https://opencode.ai/config.json',
      model: 'fake/fake-model',
      small_model: 'fake/fake-model',
      autoupdate: false,
      share: 'disabled',
      permission: { edit: 'allow', bash: 'allow', webfetch: 'allow' },
      provider: {
        fake: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Fake',
          options: { baseURL: `${at.root}/v1`, apiKey: 'sk-fake-key' },
          models: {
            'fake-model': { name: 'Fake Model', tool_call: true, limit: { context: 200_000, output: 8_192 } },
          },
        },
      },
    });
    // It installs its plugin package into the config folder at start (from the registry): a
    // copy installed beforehand saves the lookup.
    writeJson(join(config, 'package.json'), { name: 'oc-config', private: true });
    symlinkSync(join(at.installed, 'plugin', 'node_modules'), join(config, 'node_modules'));
    const h = at.home;
    return {
      args: ['run', '--format', 'json', prompt],
      env: {
        HOME: h,
        XDG_CONFIG_HOME: join(h, '.config'),
        XDG_DATA_HOME: join(h, '.local', 'share'),
        XDG_CACHE_HOME: join(h, '.cache'),
        XDG_STATE_HOME: join(h, '.local', 'state'),
        TERM: 'dumb',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_CLAUDE_CODE: '1',
        OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
      },
    };
  },
};

/**
 * Qwen Code and Gemini CLI (one family, Qwen Code began as a fork): a settings file with an
 * auth type and no usage statistics or update checks, `-p … --yolo -o stream-json`, and the
 * key and base URL in the environment.
 */
function geminiFamily(
  agent: Pick<AgentSpec, 'id' | 'label' | 'protocol'> & { pkg: string; version: string; bin: string },
  settings: { dir: string; auth: string },
  env: (root: string) => Record<string, string>,
): AgentSpec {
  return {
    id: agent.id,
    label: agent.label,
    protocol: agent.protocol,
    install: {
      dir: `${agent.id}@${agent.version}`,
      packages: [`${agent.pkg}@${agent.version}`],
      bin: agent.bin,
      node: process.execPath,
    },
    tool: { name: 'read_file', args: (path) => ({ file_path: path }) },
    start(prompt, at) {
      writeJson(join(at.home, settings.dir, 'settings.json'), {
        security: { auth: { selectedType: settings.auth } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
      });
      return {
        args: ['-p', prompt, '--yolo', '-o', 'stream-json'],
        env: { HOME: at.home, TERM: 'dumb', ...env(at.root) },
      };
    },
  };
}

const qwen = geminiFamily(
  {
    id: 'qwen-code',
    label: 'Qwen Code 0.15.10',
    protocol: 'openai-chat',
    pkg: '@qwen-code/qwen-code',
    version: '0.15.10',
    bin: 'node_modules/@qwen-code/qwen-code/cli.js',
  },
  { dir: '.qwen', auth: 'openai' },
  (root) => ({ OPENAI_API_KEY: 'sk-fake-key', OPENAI_BASE_URL: `${root}/v1`, OPENAI_MODEL: 'fake-model' }),
);

const gemini = geminiFamily(
  {
    id: 'gemini-cli',
    label: 'Gemini CLI 0.61.0',
    protocol: 'gemini',
    pkg: '@google/gemini-cli',
    version: '0.61.0',
    bin: 'node_modules/@google/gemini-cli/bundle/gemini.js',
  },
  { dir: '.gemini', auth: 'gemini-api-key' },
  (root) => ({
    GEMINI_API_KEY: 'fake-gemini-key',
    GOOGLE_GEMINI_BASE_URL: root,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  }),
);

/** Every agent of the matrix, in the order it runs. */
export const AGENTS: AgentSpec[] = [
  claudeCode('claude-code', '2.1.197'),
  claudeCode('claude-code-latest', '2.1.332', '24.21.0'),
  codex,
  opencode,
  qwen,
  gemini,
];

/** The agent of an id, or a one-line error naming the known ones. */
export function agentById(id: string): AgentSpec {
  const agent = AGENTS.find((a) => a.id === id);
  if (!agent) throw new Error(`unknown agent "${id}" (known: ${AGENTS.map((a) => a.id).join(', ')})`);
  return agent;
}

/** PATH for an agent's run: its own Node first when it has one. */
export function agentPath(spec: AgentSpec, installed: string): string {
  return spec.install.pathFirst ? `${join(installed, spec.install.pathFirst)}:${basePath()}` : basePath();
}
