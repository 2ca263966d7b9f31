import { PROVIDER_PRESETS, XAI_COMPACT_MODELS } from './catalog-data.js';
import type { CompactionStrategy } from '../../machines/index.js';
import type { Route } from './types.js';

/**
 * Strategy selection (S1): NativeStandalone for OpenAI Responses, OpenResponses, Vercel
 * AI Gateway `openai/*` routes on the gateway host and allow-listed xAI models on the xAI
 * host; NativeInline for Anthropic Claude Opus 4.x and Sonnet 4.6+; Local for everything
 * else, including off-allowlist and off-host routes. Order: standalone, inline, local.
 */

/** The chosen strategy and a one-line reason (for diagnostics and S3 reports). */
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

/** xAI allowlist: exact ids, optionally with a date/version suffix (`grok-4-0709`). */
export function isXaiCompactModel(model: string): boolean {
  const m = model.toLowerCase();
  return XAI_COMPACT_MODELS.some(
    (id) => m === id || new RegExp(`^${id.replace(/\./g, '\\.')}-\\d{4}(-\\d{2}-\\d{2})?$`).test(m),
  );
}

/**
 * Claude Opus 4.x (and later Opus), Sonnet 4.6+ (and Sonnet 5+), plus the Fable/Mythos
 * families listed as compaction-capable (wire-formats §3.5). Accepts `anthropic/` prefixes
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

/** Picks the strategy for a route exactly as S1 describes. */
export function selectStrategy(route: Route): StrategyChoice {
  const kind = route.provider;
  const preset = PROVIDER_PRESETS[kind];
  const host = hostOf(route.baseUrl ?? preset?.baseUrl);
  const trusted = route.nativeHosts ?? preset?.nativeHosts ?? [];
  const local = (reason: string): StrategyChoice => ({ kind: 'local', reason });
  const offHost = (reason: string): StrategyChoice =>
    host ? { kind: 'local', reason, offNativeHost: host } : local(reason);
  if (route.nativeCompaction === false) return local(`catalog disables native compaction for ${route.model}`);

  switch (kind) {
    case 'openai':
    case 'openresponses':
      return onHost(host, trusted)
        ? { kind: 'nativeStandalone', reason: `${kind} Responses model on ${host}: POST /responses/compact` }
        : offHost(`${kind} route on ${host ?? 'unknown host'} is not a native Responses endpoint`);
    case 'vercel':
      if (!route.model.startsWith('openai/'))
        return local(`Vercel AI Gateway model ${route.model} is not openai/*`);
      return onHost(host, trusted)
        ? { kind: 'nativeStandalone', reason: `Vercel AI Gateway openai/* route on ${host}` }
        : offHost(`Vercel route on ${host ?? 'unknown host'} is not the gateway endpoint`);
    case 'xai':
      if (!isXaiCompactModel(route.model) && route.nativeCompaction !== true) {
        return local(`xAI model ${route.model} is not on the compaction allowlist`);
      }
      return onHost(host, trusted)
        ? { kind: 'nativeStandalone', reason: `allow-listed xAI model on ${host}` }
        : offHost(`xAI route on ${host ?? 'unknown host'} is not the xAI API host`);
    case 'anthropic':
      return isAnthropicInlineModel(route.model)
        ? { kind: 'nativeInline', reason: `Anthropic ${route.model} supports compact_20260112` }
        : local(`Anthropic model ${route.model} does not support native compaction`);
    default:
      return local(`${kind} has no native compaction endpoint`);
  }
}
