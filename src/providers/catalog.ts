import { readRegularText } from '../io/read-regular.js';
import { z } from 'zod';
import {
  BUNDLED_MODELS,
  PROVIDER_KINDS,
  PROVIDER_PRESETS,
  type ModelEntry,
  type ProviderKind,
  type ProviderPreset,
  type WireApi,
} from './catalog-data.js';
import { WIRE_APIS } from './dialects.js';
import { RouteError } from '../core/errors.js';
import type { Route } from './types.js';
import type { RouteOptions } from './route-settings.js';

/**
 * Provider registry and model catalog: resolves `{ provider, model, baseUrl?, apiKeyEnv?,
 * catalogFile? }` plus the environment into a {@link ResolvedRoute} (strategy facts, budgets'
 * context window, tokenizer, capabilities, and the API key kept out of any serialization).
 */

const ModelEntrySchema = z.strictObject({
  provider: z.string().min(1).default('*'),
  model: z.string().min(1),
  contextWindow: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  encoding: z.enum(['o200k_base', 'cl100k_base']).optional(),
  nativeCompaction: z.boolean().optional(),
  supportsContextEdits: z.boolean().optional(),
  streamingOnly: z.boolean().optional(),
});

const ProviderOverrideSchema = z.strictObject({
  kind: z.enum(PROVIDER_KINDS).optional(),
  baseUrl: z.url().optional(),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional(),
  wire: z.enum(WIRE_APIS).optional(),
  /** Extra hosts trusted for native compaction (e.g. 127.0.0.1 for a fake server). */
  nativeHosts: z.array(z.string().min(1)).optional(),
});

/** The user catalog file: provider overrides and extra model rows (precedence over bundled ones). */
export const CatalogFileSchema = z.strictObject({
  providers: z.record(z.string(), ProviderOverrideSchema).optional(),
  models: z.array(ModelEntrySchema).optional(),
});
/** A validated user catalog file (see {@link CatalogFileSchema}). */
export type CatalogFile = z.infer<typeof CatalogFileSchema>;

/** Reads and validates a user catalog file; errors name the file and the field. */
export function loadCatalogFile(path: string): CatalogFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readRegularText(path, 'catalog file', 16 * 1024 * 1024));
  } catch (e) {
    throw new RouteError(`${path}: cannot read catalog file: ${(e as Error).message.split('\n')[0]}`);
  }
  const parsed = CatalogFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(root)';
    throw new RouteError(`${path}: invalid catalog field ${field}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

function matches(entry: ModelEntry, provider: string, kind: string, model: string): boolean {
  if (entry.provider !== '*' && entry.provider !== provider && entry.provider !== kind) return false;
  return entry.model.endsWith('*') ? model.startsWith(entry.model.slice(0, -1)) : entry.model === model;
}

/** Specificity: exact rows beat prefix rows; longer prefixes beat shorter; user rows beat bundled. */
function bestMatch(
  rows: readonly ModelEntry[],
  provider: string,
  kind: string,
  model: string,
): ModelEntry | undefined {
  let best: ModelEntry | undefined;
  let score = -1;
  for (const r of rows) {
    if (!matches(r, provider, kind, model)) continue;
    const s = (r.model.endsWith('*') ? r.model.length - 1 : 10_000) + (r.provider === '*' ? 0 : 1);
    if (s > score) {
      best = r;
      score = s;
    }
  }
  return best;
}

/** Looks a model up: user rows first, then bundled; `vendor/model` ids fall back to `model`. */
export function lookupModel(
  provider: string,
  kind: string,
  model: string,
  userRows: readonly ModelEntry[] = [],
): ModelEntry | undefined {
  const candidates = model.includes('/') ? [model, model.slice(model.indexOf('/') + 1)] : [model];
  for (const rows of [userRows, BUNDLED_MODELS]) {
    for (const m of candidates) {
      const hit = bestMatch(rows, provider, kind, m);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** A route ready for the clients. `apiKey` is a closure, so JSON/inspect/toString never show it. */
export interface ResolvedRoute extends Route {
  /** Provider kind; `provider` holds the same value. */
  kind: ProviderKind;
  /** Name the user chose (a kind or a preset such as `openrouter`); used in messages. */
  label: string;
  baseUrl: string;
  wire: WireApi;
  encoding: 'o200k_base' | 'cl100k_base';
  supportsContextEdits: boolean;
  streamingOnly: boolean;
  /** Hosts trusted for native compaction on this route (off-host routes use Local). */
  nativeHosts: string[];
  /** Name of the env var the key came from (safe to print). */
  apiKeyEnv?: string;
  /** Name of the env var the base URL came from (`OPENAI_BASE_URL`), when it did. */
  baseUrlEnv?: string;
  /** The API key, or undefined for keyless local servers. Never serialized. */
  apiKey: () => string | undefined;
}

/**
 * Context-edit support: the Anthropic provider has it unless the catalog says no;
 * Anthropic-compatible endpoints only when a provider-specific catalog row says yes.
 */
function contextEdits(kind: ProviderKind, entry: ModelEntry | undefined): boolean {
  if (kind === 'anthropic') return entry?.supportsContextEdits ?? true;
  if (kind === 'anthropic-compatible') return entry?.provider !== '*' && entry?.supportsContextEdits === true;
  return false;
}

export type { RouteOptions };

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0']);

/** True for loopback hosts, where keyless local servers (Ollama, vLLM) are normal. */
export function isLocalUrl(url: string): boolean {
  try {
    return LOCAL_HOSTS.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * Anthropic base URLs come both ways: the SDK convention is the origin (`https://api.anthropic.com`,
 * the SDK appends `/v1/messages`), our catalog's is with `/v1`; both mean the same endpoint.
 */
function withV1(baseUrl: string): string {
  return /\/v1$/.test(new URL(baseUrl).pathname.replace(/\/+$/, '')) ? baseUrl : `${baseUrl}/v1`;
}

/** The bundled preset and the catalog entry of a provider name; throws when neither declares it. */
function knownProvider(provider: string, user: CatalogFile) {
  const name = provider.trim().toLowerCase();
  // Own keys only: `constructor` or `__proto__` must not resolve to Object's members.
  const override = user.providers && Object.hasOwn(user.providers, name) ? user.providers[name] : undefined;
  const bundled: ProviderPreset | undefined = Object.hasOwn(PROVIDER_PRESETS, name)
    ? PROVIDER_PRESETS[name]
    : undefined;
  if (!bundled && !override?.kind) {
    throw new RouteError(
      `unknown provider "${provider}" (known: ${Object.keys(PROVIDER_PRESETS).join(', ')}; or declare it in a catalog file with a kind)`,
    );
  }
  return { name, override, bundled };
}

/**
 * Throws {@link RouteError} when neither the bundled presets nor the catalog file declare
 * `provider`, so a caller can name an unknown provider before asking for anything else.
 */
export function checkProviderKnown(provider: string, catalogFile?: string): void {
  knownProvider(provider, catalogFile ? loadCatalogFile(catalogFile) : {});
}

/**
 * Resolves a route. Throws {@link RouteError} for an unknown provider, a missing base URL
 * (compatible kinds without a preset) or a missing key on a non-local host.
 */
export function resolveRoute(
  spec: RouteOptions & { model: string },
  env: NodeJS.ProcessEnv = spec.env ?? process.env,
): ResolvedRoute {
  const user = spec.catalogFile ? loadCatalogFile(spec.catalogFile) : {};
  const { name, override, bundled } = knownProvider(spec.provider, user);
  const kind = (override?.kind ?? bundled?.kind) as ProviderKind;
  const base = bundled ?? PROVIDER_PRESETS[kind];
  // Like the official SDKs, OPENAI_BASE_URL / ANTHROPIC_BASE_URL replace the preset's default.
  const fromEnv = bundled?.baseUrlEnv ? env[bundled.baseUrlEnv]?.trim() || undefined : undefined;
  const given = (spec.baseUrl ?? override?.baseUrl ?? fromEnv ?? base.baseUrl)?.replace(/\/+$/, '');
  const urlFromEnv = fromEnv !== undefined && spec.baseUrl === undefined && override?.baseUrl === undefined;
  if (!given) throw new RouteError(`provider "${spec.provider}" needs a base URL (--base-url)`);
  try {
    new URL(given);
  } catch {
    throw new RouteError(`invalid base URL for provider "${spec.provider}"`);
  }
  const baseUrl = kind === 'anthropic' || kind === 'anthropic-compatible' ? withV1(given) : given;
  if (!spec.model.trim()) throw new RouteError('model must not be empty (--model)');

  const apiKeyEnv = spec.apiKeyEnv ?? override?.apiKeyEnv ?? base.apiKeyEnv;
  const key = apiKeyEnv ? env[apiKeyEnv] : undefined;
  if (!key && !isLocalUrl(baseUrl)) {
    throw new RouteError(
      apiKeyEnv
        ? `missing API key: set ${apiKeyEnv} for provider "${spec.provider}"`
        : `provider "${spec.provider}" needs an API key env var (--api-key-env)`,
    );
  }

  const entry = lookupModel(name, kind, spec.model, user.models ?? []);
  const route: ResolvedRoute = {
    provider: kind,
    kind,
    label: name,
    model: spec.model,
    baseUrl,
    wire: override?.wire ?? base.wire,
    encoding: entry?.encoding ?? 'o200k_base',
    supportsContextEdits: contextEdits(kind, entry),
    streamingOnly: entry?.streamingOnly ?? false,
    nativeHosts: [...base.nativeHosts, ...(override?.nativeHosts ?? [])],
    apiKey: () => key || undefined,
    ...(entry?.contextWindow !== undefined ? { contextWindow: entry.contextWindow } : {}),
    ...(entry?.maxOutputTokens !== undefined ? { maxOutputTokens: entry.maxOutputTokens } : {}),
    ...(entry?.nativeCompaction !== undefined ? { nativeCompaction: entry.nativeCompaction } : {}),
    ...(apiKeyEnv ? { apiKeyEnv } : {}),
    ...(urlFromEnv ? { baseUrlEnv: bundled?.baseUrlEnv } : {}),
  };
  return route;
}
