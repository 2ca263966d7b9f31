import { PROVIDER_PRESETS } from './catalog-data.js';
import type { CompactionStrategy } from '../../machines/index.js';
import type { Route } from './types.js';

/**
 * Strategy selection: NativeStandalone for OpenAI Responses, OpenResponses, Vercel
 * AI Gateway `openai/*` routes on the gateway host and allow-listed xAI models on the xAI
 * host; NativeInline for Anthropic Claude Opus 4.x and Sonnet 4.6+; Local for everything
 * else, including off-allowlist and off-host routes. Order: standalone, inline, local.
 */

/** The chosen strategy and a one-line reason (for diagnostics and compaction reports). */
export interface StrategyChoice {
  kind: CompactionStrategy;
  reason: string;
  /**
   * Set when a provider with a native compaction endpoint summarizes locally only because its
   * base URL is on another host (a proxy or gateway): that host, so reports can say how to trust it.
   */
  offNativeHost?: string;
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Host equals a trusted host or is a subdomain of it (`ai-gateway.vercel.sh` ⊂ `vercel.sh`). */
function onHost(host: string | undefined, trusted: readonly string[]): boolean {
  if (!host) return false;
  return trusted.some((t) => host === t.toLowerCase() || host.endsWith(`.${t.toLowerCase()}`));
}

/** Picks the strategy for a route: the kind's native rule where its model and host allow it, else Local. */
export function selectStrategy(route: Route): StrategyChoice {
  const kind = route.provider;
  const preset = PROVIDER_PRESETS[kind];
  const host = hostOf(route.baseUrl ?? preset?.baseUrl);
  const trusted = route.nativeHosts ?? preset?.nativeHosts ?? [];
  const local = (reason: string): StrategyChoice => ({ kind: 'local', reason });
  if (route.nativeCompaction === false) return local(`catalog disables native compaction for ${route.model}`);
  const rule = Object.hasOwn(PROVIDER_PRESETS, kind) ? preset.native : undefined;
  if (!rule) return local(`${kind} has no native compaction endpoint`);
  const notModel = rule.modelGate?.(route.model, route.nativeCompaction);
  if (notModel !== undefined) return local(notModel);
  const facts = { kind, model: route.model, ...(host !== undefined ? { host } : {}) };
  if (rule.offHost && !onHost(host, trusted)) {
    // A provider with a native endpoint reached through another host (a proxy or gateway).
    const reason = rule.offHost(facts);
    return host ? { kind: 'local', reason, offNativeHost: host } : local(reason);
  }
  return { kind: rule.strategy, reason: rule.chosen(facts) };
}
