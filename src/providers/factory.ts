import type { ResolvedRoute } from './catalog.js';
import type { HttpOptions } from './http.js';
import { nativeDialectFor } from './dialects.js';
import { selectStrategy, type StrategyChoice } from './strategy.js';
import { createSummaryClient } from './summary-clients.js';
import type { NativeInlineClient, NativeStandaloneClient, SummaryClient } from './types.js';

/** The clients one route needs: the S1 strategy, always a Local summary client, and the native one. */
export interface ProviderClients {
  strategy: StrategyChoice;
  summary: SummaryClient;
  standalone?: NativeStandaloneClient;
  inline?: NativeInlineClient;
}

/**
 * Builds the clients for a resolved route. `summary` always exists (Local fallback, A4);
 * `standalone` exists for NativeStandalone routes and `inline` for NativeInline routes.
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
