import { z } from 'zod';
import { settingsGroup, type SettingsOf } from '../core/settings.js';

/**
 * The route of a session, one row each: the library's `route`, the config file's `provider`
 * section (where the provider is `kind`) and the route flags of `run` and `compact`.
 */
export const ROUTE_SETTINGS = {
  provider: {
    schema: z.string().min(1, 'expected a provider name'),
    default: 'offline',
    configKey: 'kind',
    doc: 'Provider kind or preset name; `offline` is the embedded deterministic summarizer (no network).',
    flag: {
      name: 'provider',
      arg: 'NAME',
      parse: z.string(),
      help: 'offline (default: embedded, deterministic, no network), openai, openresponses, vercel, xai, anthropic, openai-compatible, anthropic-compatible, or a preset: openrouter, deepseek, gemini, groq, mistral, ollama, vllm',
    },
  },
  model: {
    schema: z.string().min(1, 'expected a model id'),
    defaultText: 'required except for `offline`',
    doc: 'Model id.',
    flag: { name: 'model', arg: 'M', parse: z.string(), help: 'model id (required except for offline)' },
  },
  baseUrl: {
    schema: z.url('expected a URL'),
    defaultText: "the provider's",
    doc: 'Endpoint base, ending before /chat/completions, /responses or /messages.',
    flag: {
      name: 'base-url',
      arg: 'URL',
      parse: z.string(),
      help: 'endpoint base (ends before /chat/completions, /responses, /messages)',
    },
  },
  apiKeyEnv: {
    schema: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name'),
    defaultText: "the provider's",
    doc: 'Environment variable holding the API key (never the key itself).',
    flag: {
      name: 'api-key-env',
      arg: 'NAME',
      parse: z.string(),
      help: 'environment variable holding the key (keys never appear in output)',
    },
  },
  catalogFile: {
    schema: z.string().min(1, 'expected a file path'),
    doc: 'A user model catalog file (context windows, provider overrides, trusted native hosts).',
    libraryOnly: true,
    flag: {
      name: 'catalog',
      arg: 'FILE',
      parse: z.string(),
      help: 'user model catalog (context windows, provider overrides)',
    },
  },
  env: {
    // process.env is not a plain object, so it is copied before the record check.
    schema: z.preprocess(
      (v) => (v !== null && typeof v === 'object' ? { ...v } : v),
      z.record(z.string(), z.string().optional()),
    ),
    defaultText: '`process.env`',
    doc: 'Environment to read the key from.',
    libraryOnly: true,
  },
} as const;

/** The route table and everything derived from it. */
export const ROUTE = settingsGroup('Route', { option: 'route', section: 'provider' }, ROUTE_SETTINGS);

/**
 * Where summaries and native compactions go, as the caller names it (a session's `route`, the
 * CLI's route flags, the config file's `provider`); only the provider is required.
 */
export type RouteOptions = Partial<SettingsOf<typeof ROUTE_SETTINGS>> & { provider: string };
