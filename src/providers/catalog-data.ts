/**
 * The bundled provider presets and model catalog. Values are public model-card limits;
 * a user catalog file (see catalog.ts) can override or extend every entry.
 */

import type { WireApi } from './dialects.js';

export type { WireApi };

/** The provider kinds Compactor speaks; presets below map friendly names onto them. */
export const PROVIDER_KINDS = [
  'openai',
  'openresponses',
  'vercel',
  'xai',
  'anthropic',
  'openai-compatible',
  'anthropic-compatible',
] as const;
/** One of the provider kinds in {@link PROVIDER_KINDS}. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** Connection defaults for one provider name (a kind or a named compatible preset). */
export interface ProviderPreset {
  kind: ProviderKind;
  /** Default base URL (ends before `/responses`, `/chat/completions`, `/messages`). */
  baseUrl?: string;
  /** Environment variable holding the API key. */
  apiKeyEnv?: string;
  /** Environment variable that overrides the default base URL, as the official SDK reads it. */
  baseUrlEnv?: string;
  /** Summary wire protocol. */
  wire: WireApi;
  /** Hosts on which this provider's native compaction endpoint is trusted (off-host routes use Local). */
  nativeHosts: string[];
  /** How routes of this kind compact natively, when they can; others summarize locally. */
  native?: NativeRule;
}

/** What the strategy rule knows of a route when it words its reason. */
export interface NativeRouteFacts {
  kind: string;
  model: string;
  /** Host of the base URL, when it has one. */
  host?: string;
}

/**
 * A provider kind's native compaction: the strategy it offers, whether a model qualifies, and
 * (for endpoints that only the provider's own hosts serve) the host gate. Each gate words the
 * reason reports show.
 */
export interface NativeRule {
  strategy: 'nativeStandalone' | 'nativeInline';
  /** Why the model does not qualify, or undefined when it does (`nativeCompaction` is the catalog's verdict). */
  modelGate?: (model: string, nativeCompaction: boolean | undefined) => string | undefined;
  /** The reason when the route qualifies. */
  chosen: (route: NativeRouteFacts) => string;
  /** With a host gate: the reason when the base URL is not on a trusted host. */
  offHost?: (route: NativeRouteFacts) => string;
}

/** The Responses compaction endpoint on the provider's own hosts (OpenAI, OpenResponses). */
const RESPONSES_COMPACT: NativeRule = {
  strategy: 'nativeStandalone',
  chosen: ({ kind, host }) => `${kind} Responses model on ${host}: POST /responses/compact`,
  offHost: ({ kind, host }) =>
    `${kind} route on ${host ?? 'unknown host'} is not a native Responses endpoint`,
};

export const PROVIDER_PRESETS: Record<string, ProviderPreset> = {
  openai: {
    kind: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    apiKeyEnv: 'OPENAI_API_KEY',
    baseUrlEnv: 'OPENAI_BASE_URL',
    wire: 'responses',
    nativeHosts: ['api.openai.com'],
    native: RESPONSES_COMPACT,
  },
  openresponses: {
    kind: 'openresponses',
    baseUrl: 'https://api.openresponses.com/v1',
    apiKeyEnv: 'OPENRESPONSES_API_KEY',
    wire: 'responses',
    nativeHosts: ['api.openai.com', 'api.openresponses.com'],
    native: RESPONSES_COMPACT,
  },
  vercel: {
    kind: 'vercel',
    baseUrl: 'https://ai-gateway.vercel.sh/v1',
    apiKeyEnv: 'AI_GATEWAY_API_KEY',
    wire: 'chat',
    nativeHosts: ['vercel.sh'],
    native: {
      strategy: 'nativeStandalone',
      modelGate: (model) =>
        model.startsWith('openai/') ? undefined : `Vercel AI Gateway model ${model} is not openai/*`,
      chosen: ({ host }) => `Vercel AI Gateway openai/* route on ${host}`,
      offHost: ({ host }) => `Vercel route on ${host ?? 'unknown host'} is not the gateway endpoint`,
    },
  },
  xai: {
    kind: 'xai',
    baseUrl: 'https://api.x.ai/v1',
    apiKeyEnv: 'XAI_API_KEY',
    wire: 'chat',
    nativeHosts: ['api.x.ai'],
    native: {
      strategy: 'nativeStandalone',
      modelGate: (model, nativeCompaction) =>
        isXaiCompactModel(model) || nativeCompaction === true
          ? undefined
          : `xAI model ${model} is not on the compaction allowlist`,
      chosen: ({ host }) => `allow-listed xAI model on ${host}`,
      offHost: ({ host }) => `xAI route on ${host ?? 'unknown host'} is not the xAI API host`,
    },
  },
  anthropic: {
    kind: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    wire: 'messages',
    nativeHosts: [],
    native: {
      strategy: 'nativeInline',
      modelGate: (model) =>
        isAnthropicInlineModel(model)
          ? undefined
          : `Anthropic model ${model} does not support native compaction`,
      chosen: ({ model }) => `Anthropic ${model} supports compact_20260112`,
    },
  },
  'openai-compatible': { kind: 'openai-compatible', wire: 'chat', nativeHosts: [] },
  'anthropic-compatible': { kind: 'anthropic-compatible', wire: 'messages', nativeHosts: [] },
  openrouter: {
    kind: 'openai-compatible',
    baseUrl: 'https://openrouter.ai/api/v1',
    apiKeyEnv: 'OPENROUTER_API_KEY',
    wire: 'chat',
    nativeHosts: [],
  },
  deepseek: {
    kind: 'openai-compatible',
    baseUrl: 'https://api.deepseek.com/v1',
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    wire: 'chat',
    nativeHosts: [],
  },
  gemini: {
    kind: 'openai-compatible',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
    apiKeyEnv: 'GEMINI_API_KEY',
    wire: 'chat',
    nativeHosts: [],
  },
  groq: {
    kind: 'openai-compatible',
    baseUrl: 'https://api.groq.com/openai/v1',
    apiKeyEnv: 'GROQ_API_KEY',
    wire: 'chat',
    nativeHosts: [],
  },
  mistral: {
    kind: 'openai-compatible',
    baseUrl: 'https://api.mistral.ai/v1',
    apiKeyEnv: 'MISTRAL_API_KEY',
    wire: 'chat',
    nativeHosts: [],
  },
  ollama: { kind: 'openai-compatible', baseUrl: 'http://localhost:11434/v1', wire: 'chat', nativeHosts: [] },
  vllm: { kind: 'openai-compatible', baseUrl: 'http://localhost:8000/v1', wire: 'chat', nativeHosts: [] },
};

/** One catalog row. `model` matches exactly, or as a prefix when it ends with `*`. */
export interface ModelEntry {
  /** Provider name (kind or preset) the row applies to; `*` for any. */
  provider: string;
  model: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  encoding?: 'o200k_base' | 'cl100k_base';
  /** false disables native compaction for this model even where its route allows it; true adds an xAI model to the allowlist. */
  nativeCompaction?: boolean;
  /** Anthropic context-edit support. */
  supportsContextEdits?: boolean;
  /** The route only answers with SSE; summary clients stream and fold. */
  streamingOnly?: boolean;
}

export const BUNDLED_MODELS: readonly ModelEntry[] = [
  // OpenAI (tiktoken's model map)
  {
    provider: '*',
    model: 'gpt-5*',
    contextWindow: 400_000,
    maxOutputTokens: 128_000,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'gpt-4.1*',
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'gpt-4o*',
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    encoding: 'o200k_base',
  },
  { provider: '*', model: 'o3*', contextWindow: 200_000, maxOutputTokens: 100_000, encoding: 'o200k_base' },
  {
    provider: '*',
    model: 'o4-mini*',
    contextWindow: 200_000,
    maxOutputTokens: 100_000,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'gpt-4-turbo*',
    contextWindow: 128_000,
    maxOutputTokens: 4_096,
    encoding: 'cl100k_base',
  },
  { provider: '*', model: 'gpt-4', contextWindow: 8_192, maxOutputTokens: 8_192, encoding: 'cl100k_base' },
  {
    provider: '*',
    model: 'gpt-3.5-turbo*',
    contextWindow: 16_385,
    maxOutputTokens: 4_096,
    encoding: 'cl100k_base',
  },
  {
    provider: '*',
    model: 'gpt-oss-*',
    contextWindow: 131_072,
    maxOutputTokens: 131_072,
    encoding: 'o200k_base',
  },
  // Anthropic (Claude has no tiktoken encoding; o200k_base is the estimate)
  {
    provider: '*',
    model: 'claude-opus-4*',
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    encoding: 'o200k_base',
    supportsContextEdits: true,
  },
  {
    provider: '*',
    model: 'claude-opus-4-5*',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    encoding: 'o200k_base',
    supportsContextEdits: true,
  },
  {
    provider: '*',
    model: 'claude-opus-4-6*',
    contextWindow: 200_000,
    maxOutputTokens: 128_000,
    encoding: 'o200k_base',
    supportsContextEdits: true,
  },
  {
    provider: '*',
    model: 'claude-sonnet-4*',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    encoding: 'o200k_base',
    supportsContextEdits: true,
  },
  {
    provider: '*',
    model: 'claude-haiku-4*',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    encoding: 'o200k_base',
    supportsContextEdits: true,
  },
  {
    provider: '*',
    model: 'claude-3*',
    contextWindow: 200_000,
    maxOutputTokens: 8_192,
    encoding: 'o200k_base',
  },
  // xAI
  {
    provider: '*',
    model: 'grok-4*',
    contextWindow: 256_000,
    maxOutputTokens: 64_000,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'grok-4-fast*',
    contextWindow: 2_000_000,
    maxOutputTokens: 30_000,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'grok-4.1-fast*',
    contextWindow: 2_000_000,
    maxOutputTokens: 30_000,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'grok-code-fast-1*',
    contextWindow: 256_000,
    maxOutputTokens: 10_000,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'grok-3*',
    contextWindow: 131_072,
    maxOutputTokens: 16_384,
    encoding: 'o200k_base',
  },
  // Others (usage-anchored; o200k_base estimate with margin)
  {
    provider: '*',
    model: 'deepseek-chat',
    contextWindow: 128_000,
    maxOutputTokens: 8_192,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'deepseek-reasoner',
    contextWindow: 128_000,
    maxOutputTokens: 64_000,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'gemini-2.5-*',
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    encoding: 'o200k_base',
  },
  {
    provider: '*',
    model: 'gemini-3*',
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    encoding: 'o200k_base',
  },
];

/** xAI models served by `POST /v1/responses/compact` (allowlist; extend via catalog `nativeCompaction: true`). */
export const XAI_COMPACT_MODELS: readonly string[] = [
  'grok-4',
  'grok-4-fast',
  'grok-4-fast-reasoning',
  'grok-4-fast-non-reasoning',
  'grok-4.1-fast',
  'grok-4.1-fast-reasoning',
  'grok-4.1-fast-non-reasoning',
  'grok-4.6',
  'grok-code-fast-1',
];

/** xAI allowlist: exact ids, optionally with a date/version suffix (`grok-4-0709`). */
export function isXaiCompactModel(model: string): boolean {
  const m = model.toLowerCase();
  return XAI_COMPACT_MODELS.some(
    (id) => m === id || new RegExp(`^${id.replace(/\./g, '\\.')}-\\d{4}(-\\d{2}-\\d{2})?$`).test(m),
  );
}

/**
 * Claude Opus 4.x (and later Opus), Sonnet 4.6+ (and Sonnet 5+), plus the Fable/Mythos
 * families Anthropic lists as compaction-capable. Accepts `anthropic/` prefixes
 * and dated suffixes; older Sonnet/Haiku/Claude 3 do not qualify.
 */
export function isAnthropicInlineModel(model: string): boolean {
  const m = model.toLowerCase().replace(/^anthropic\//, '');
  const fam = /^claude-(opus|sonnet|fable|mythos)-(\d+)(?:[-.](\d{1,2}))?(?:$|-)/.exec(m);
  if (!fam) return false;
  const [, family, majorS, minorS] = fam;
  const major = Number(majorS);
  const minor = minorS === undefined ? 0 : Number(minorS);
  if (family === 'opus') return major >= 4;
  if (family === 'sonnet') return major > 4 || (major === 4 && minor >= 6);
  return major >= 5;
}
