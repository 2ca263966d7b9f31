import type { ResolvedRoute } from './catalog.js';
import { siteOf } from './dialect.js';
import { dialectOf } from './dialects.js';
import { EmptySummaryError } from './errors.js';
import { postJson, postSse, type HttpOptions, type PostSpec } from './http.js';
import type { SummaryClient, SummaryRequest, SummaryResponse } from './types.js';

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
