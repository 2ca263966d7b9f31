import { createEstimator, type Estimator } from '../estimate/estimator.js';
import { checkProviderKnown, resolveRoute, type ResolvedRoute } from '../providers/catalog.js';
import { RouteError } from '../core/errors.js';
import { createProviderClients } from '../providers/clients.js';
import type { HttpOptions } from '../providers/http.js';
import { httpLimits, type HttpLimits } from '../providers/http-limits.js';
import type { StrategyChoice } from '../providers/strategy.js';
import type { NativeInlineClient, NativeStandaloneClient, SummaryClient } from '../providers/types.js';
import { offlineProvider, OFFLINE_CONTEXT_WINDOW } from '../providers/offline/offline-provider.js';
import type { RouteOptions } from '../providers/route-settings.js';

export { OFFLINE_CONTEXT_WINDOW };

export type { RouteOptions };

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
  /** Compaction strategy of the route and why. */
  strategy: StrategyChoice;
  /** Provider time limits in force (per request, retries, all attempts); null offline (no network). */
  http: HttpLimits | null;
  /** The provider reports context-edit support (the inline edit ladder then clears too). */
  supportsContextEdits: boolean;
  encoding: 'o200k_base' | 'cl100k_base';
  /** The token estimator: the one the caller gave, else one for the route's encoding. */
  estimator: Estimator;
  summary: SummaryClient;
  standalone?: NativeStandaloneClient;
  inline?: NativeInlineClient;
  /** The configured API key values (a closure, so JSON and inspection never show them). */
  secrets: () => string[];
  /**
   * Set when summaries come from the caller's own model (a framework's model, a proxy's
   * upstream): the model they are written with, or null when it is always the model of the
   * request being compacted.
   */
  caller?: { model: string | null };
}

/**
 * Resolves a session route: `offline` gets the embedded offline summarizer and the Local
 * strategy; anything else goes through `resolveRoute` → `createProviderClients`, which picks its strategy.
 * Without an `estimator` the route's own encoding is used. Throws {@link RouteError} (one
 * line, never a key) for unknown providers, missing keys or a missing model.
 */
export function resolveSessionRoute(
  options: RouteOptions,
  estimator: Estimator | undefined,
  http: HttpOptions = {},
): SessionRoute {
  if (offlineProvider.isNamed(options.provider)) return offlineRoute(options, estimator);
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
    provider: offlineProvider.name,
    label: offlineProvider.name,
    model: options.model ?? offlineProvider.model,
    baseUrl: null,
    wire: null,
    apiKeyEnv: null,
    baseUrlEnv: null,
    contextWindow: offlineProvider.contextWindow,
    strategy: offlineProvider.strategy,
    http: null,
    supportsContextEdits: false,
    encoding: est.encoding === 'cl100k_base' ? 'cl100k_base' : 'o200k_base',
    estimator: est,
    summary: offlineProvider.summaryClient(est),
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
      throw new RouteError(e.message.replace('(known: ', `(known: ${offlineProvider.name}, `));
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
  if (offlineProvider.isNamed(provider)) return;
  namingOffline(() => checkProviderKnown(provider, catalogFile));
}

/**
 * A route whose summaries come from `summarizer` (a caller's own model): Local strategy, no
 * native endpoints of the route's own, unless the caller gives its `standalone` client (then
 * NativeStandalone) or its `inline` client (then NativeInline), with `summarizer` as the Local
 * fallback; the window stays the route's.
 * Without a summarizer the route is unchanged.
 */
export function withSummarizer(
  route: SessionRoute,
  summarizer: SummaryClient | undefined,
  standalone?: NativeStandaloneClient,
  inline?: NativeInlineClient,
): SessionRoute {
  if (!summarizer) return route;
  const { standalone: _s, inline: _i, ...rest } = route;
  const local = {
    ...rest,
    model: summarizer.model,
    caller: { model: summarizer.followsRequestModel === true ? null : summarizer.model },
    strategy: {
      kind: 'local' as const,
      reason: `summaries from the caller's model (${summarizer.provider}/${summarizer.model})`,
    },
    supportsContextEdits: false,
    summary: summarizer,
  };
  if (inline && !standalone)
    return {
      ...local,
      strategy: {
        kind: 'nativeInline',
        reason: `native compaction inside a request of the caller's endpoint (${inline.provider}/${inline.model})`,
      },
      inline,
    };
  if (!standalone) return local;
  return {
    ...local,
    strategy: {
      kind: 'nativeStandalone',
      reason: `native compaction through the caller's endpoint (${standalone.provider}/${standalone.model})`,
    },
    standalone,
  };
}
