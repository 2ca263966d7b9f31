import { createEstimator, type Estimator } from '../estimate/estimator.js';
import {
  checkProviderKnown,
  resolveRoute,
  type ResolvedRoute,
  type RouteOptions,
} from '../providers/catalog.js';
import { RouteError } from '../providers/errors.js';
import { createProviderClients } from '../providers/factory.js';
import type { HttpOptions } from '../providers/http.js';
import { httpLimits, type HttpLimits } from '../providers/http-limits.js';
import type { StrategyChoice } from '../providers/strategy.js';
import type { NativeInlineClient, NativeStandaloneClient, SummaryClient } from '../providers/types.js';
import { createOfflineSummarizer, OFFLINE_MODEL, OFFLINE_PROVIDER } from '../summary/index.js';

/**
 * Context window assumed for the offline route when neither `limits.capacity` nor a
 * catalog row says otherwise: the smallest window current agent models ship with, so
 * budgets derived from it are safe for any of them.
 */
export const OFFLINE_CONTEXT_WINDOW = 32_000;

/** A resolved route with its clients. */
export interface SessionRoute {
  /** Provider kind (`offline` for the embedded summarizer). */
  provider: string;
  /** The name the caller used (a kind or a preset such as `openrouter`). */
  label: string;
  model: string;
  /** Endpoint base URL; null for offline. */
  baseUrl: string | null;
  /** Summary wire protocol (`chat`, `responses`, `messages`); null for offline. */
  wire: string | null;
  /** Environment variable the key came from (a name, safe to print); null when none. */
  apiKeyEnv: string | null;
  /** Environment variable the base URL came from (`OPENAI_BASE_URL`); null when it did not. */
  baseUrlEnv: string | null;
  /** Model window from the catalog (32,000 for offline); null when unknown. */
  contextWindow: number | null;
  /** S1 strategy and why. */
  strategy: StrategyChoice;
  /** Provider time limits in force (per request, retries, all attempts); null offline (no network). */
  http: HttpLimits | null;
  /** A1: the provider reports context-edit support. */
  supportsContextEdits: boolean;
  encoding: 'o200k_base' | 'cl100k_base';
  /** The token estimator: the one the caller gave, else one for the route's encoding. */
  estimator: Estimator;
  summary: SummaryClient;
  standalone?: NativeStandaloneClient;
  inline?: NativeInlineClient;
  /** The configured API key values (a closure, so JSON and inspection never show them). */
  secrets: () => string[];
}

/**
 * Resolves a session route: `offline` gets {@link createOfflineSummarizer} and the Local
 * strategy; anything else goes through `resolveRoute` → `createProviderClients` (S1).
 * Without an `estimator` the route's own encoding is used. Throws {@link RouteError} (one
 * line, never a key) for unknown providers, missing keys or a missing model.
 */
export function resolveSessionRoute(
  options: RouteOptions,
  estimator: Estimator | undefined,
  http: HttpOptions = {},
): SessionRoute {
  if (options.provider.trim().toLowerCase() === OFFLINE_PROVIDER) return offlineRoute(options, estimator);
  if (options.model === undefined || options.model.trim() === '')
    throw new RouteError(`route.model is required for provider "${options.provider}"`);
  const route = catalogRoute({ ...options, model: options.model });
  const clients = createProviderClients(route, http);
  return {
    provider: route.kind,
    label: route.label,
    model: route.model,
    baseUrl: route.baseUrl,
    wire: route.wire,
    apiKeyEnv: route.apiKeyEnv ?? null,
    baseUrlEnv: route.baseUrlEnv ?? null,
    contextWindow: route.contextWindow ?? null,
    strategy: clients.strategy,
    http: httpLimits(http),
    supportsContextEdits: route.supportsContextEdits,
    encoding: route.encoding,
    estimator: estimator ?? createEstimator({ encoding: route.encoding }),
    summary: clients.summary,
    ...(clients.standalone ? { standalone: clients.standalone } : {}),
    ...(clients.inline ? { inline: clients.inline } : {}),
    secrets: () => {
      const key = route.apiKey();
      return key ? [key] : [];
    },
  };
}

/** The embedded offline summarizer: no network, no key, the Local strategy. */
function offlineRoute(options: RouteOptions, estimator: Estimator | undefined): SessionRoute {
  const est = estimator ?? createEstimator();
  return {
    provider: OFFLINE_PROVIDER,
    label: OFFLINE_PROVIDER,
    model: options.model ?? OFFLINE_MODEL,
    baseUrl: null,
    wire: null,
    apiKeyEnv: null,
    baseUrlEnv: null,
    contextWindow: OFFLINE_CONTEXT_WINDOW,
    strategy: { kind: 'local', reason: 'the embedded offline summarizer (no network) is a Local route' },
    http: null,
    supportsContextEdits: false,
    encoding: est.encoding === 'cl100k_base' ? 'cl100k_base' : 'o200k_base',
    estimator: est,
    summary: createOfflineSummarizer({ estimator: est }),
    secrets: () => [],
  };
}

/** Runs a catalog lookup; its errors also name the offline route among the known providers. */
function namingOffline<T>(lookup: () => T): T {
  try {
    return lookup();
  } catch (e) {
    // The catalog does not know the embedded route; name it among the known providers.
    if (e instanceof RouteError)
      throw new RouteError(e.message.replace('(known: ', `(known: ${OFFLINE_PROVIDER}, `));
    throw e;
  }
}

/** A provider route from the catalog. */
function catalogRoute(options: RouteOptions & { model: string }): ResolvedRoute {
  return namingOffline(() =>
    resolveRoute(
      {
        provider: options.provider,
        model: options.model,
        baseUrl: options.baseUrl,
        apiKeyEnv: options.apiKeyEnv,
        catalogFile: options.catalogFile,
      },
      options.env ?? process.env,
    ),
  );
}

/**
 * Throws {@link RouteError} (naming the known providers, offline among them) when `provider` is
 * neither the offline route, a bundled one nor declared in the catalog file.
 */
export function checkRouteProvider(provider: string, catalogFile?: string): void {
  if (provider.trim().toLowerCase() === OFFLINE_PROVIDER) return;
  namingOffline(() => checkProviderKnown(provider, catalogFile));
}

/**
 * A route whose summaries come from `summarizer` (a caller's own model): Local strategy, no
 * native endpoints; the window stays the route's. Without a summarizer the route is unchanged.
 */
export function withSummarizer(route: SessionRoute, summarizer: SummaryClient | undefined): SessionRoute {
  if (!summarizer) return route;
  const { standalone: _s, inline: _i, ...rest } = route;
  return {
    ...rest,
    model: summarizer.model,
    strategy: {
      kind: 'local',
      reason: `summaries from the caller's model (${summarizer.provider}/${summarizer.model})`,
    },
    supportsContextEdits: false,
    summary: summarizer,
  };
}
