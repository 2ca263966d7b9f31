import type { ResolvedRoute } from './catalog.js';
import { postJson, postSse, type HttpOptions, type PostSpec } from './http.js';
import { siteOf } from './dialect.js';
import { dialectOf, nativeDialectFor } from './dialects.js';
import { EmptySummaryError } from '../core/errors.js';
import { selectStrategy, type StrategyChoice } from './strategy.js';
import type {
  NativeInlineClient,
  NativeStandaloneClient,
  SummaryClient,
  SummaryRequest,
  SummaryResponse,
} from './types.js';

/** The clients one route needs: the route's strategy, always a Local summary client, and the native one. */
export interface ProviderClients {
  strategy: StrategyChoice;
  summary: SummaryClient;
  standalone?: NativeStandaloneClient;
  inline?: NativeInlineClient;
}

/**
 * Builds the clients for a resolved route. `summary` always exists (a failed native pass falls back
 * to Local); `standalone` exists for NativeStandalone routes and `inline` for NativeInline routes.
 */
export function createProviderClients(route: ResolvedRoute, opts: HttpOptions = {}): ProviderClients {
  const strategy = selectStrategy(route);
  const summary = createSummaryClient(route, opts);
  // The dialect serving the chosen native strategy builds its client; the summary wire may differ.
  const native = nativeDialectFor(strategy.kind)?.native;
  if (native?.strategy === 'nativeStandalone')
    return { strategy, summary, standalone: native.client(route, opts) };
  if (native?.strategy === 'nativeInline') return { strategy, summary, inline: native.client(route, opts) };
  return { strategy, summary };
}

/**
 * The Local summary client, one for every wire: the route's dialect builds the body and
 * reads the answer; streaming-only routes are folded into one response; an empty summary is
 * an {@link EmptySummaryError}; a cut-off summary reports `finishReason: 'length'`.
 */

/** Creates the Local summary client for a route, speaking the route's wire protocol. */
export function createSummaryClient(route: ResolvedRoute, opts: HttpOptions = {}): SummaryClient {
  const dialect = dialectOf(route.wire);
  const base = siteOf(route);
  return {
    provider: route.label,
    model: route.model,
    async summarize(request: SummaryRequest, signal?: AbortSignal): Promise<SummaryResponse> {
      const site = { ...base, model: request.model };
      const body = dialect.body(route, request, route.streamingOnly);
      const spec: PostSpec = {
        url: `${route.baseUrl}${dialect.path}`,
        headers: dialect.headers(route, body),
        body,
        site,
      };
      const json = route.streamingOnly
        ? await postSse(spec, (ev) => dialect.fold(site, ev), opts, signal)
        : await postJson(spec, opts, signal);
      const res = dialect.read(json, site);
      if (res.text.trim() === '')
        throw new EmptySummaryError({
          provider: site.provider,
          model: site.model,
          ...(res.usage?.inputTokens !== undefined ? { inputTokens: res.usage.inputTokens } : {}),
        });
      return res;
    },
  };
}
