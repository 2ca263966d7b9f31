import type { ResolvedRoute } from './catalog.js';
import type { HttpOptions } from './http.js';
import { createInlineClient } from './inline-client.js';
import { createStandaloneClient } from './standalone-client.js';
import { selectStrategy, type StrategyChoice } from './strategy.js';
import { createSummaryClient } from './summary-clients.js';
import type { NativeInlineClient, NativeStandaloneClient, SummaryClient } from './types.js';

/** The clients one route needs: the route's strategy, always a Local summary client, and the native one. */
export interface ProviderClients {
  strategy: StrategyChoice;
  summary: SummaryClient;
  standalone?: NativeStandaloneClient;
  inline?: NativeInlineClient;
}

/**
 * Builds the clients for a resolved route. `summary` always exists (inline falls back to Local);
 * `standalone` exists for NativeStandalone routes and `inline` for NativeInline routes.
 */
export function createProviderClients(route: ResolvedRoute, opts: HttpOptions = {}): ProviderClients {
  const strategy = selectStrategy(route);
  const summary = createSummaryClient(route, opts);
  if (strategy.kind === 'nativeStandalone')
    return { strategy, summary, standalone: createStandaloneClient(route, opts) };
  if (strategy.kind === 'nativeInline') return { strategy, summary, inline: createInlineClient(route, opts) };
  return { strategy, summary };
}
