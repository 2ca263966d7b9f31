import type { Json } from '../messages/message.js';

/**
 * Top-level fields of the caller's own provider request (cache keys, service tier, safety
 * identifier, Anthropic `thinking` …) that Compactor forwards on every request it builds on
 * the caller's behalf, each endpoint taking only the fields its API accepts. Fields that
 * change what is generated (temperature, tools, stream …) are never forwarded: Compactor sets
 * those itself.
 */
export type RequestFields = Record<string, Json>;

/** The endpoints Compactor builds requests for. */
export type FieldEndpoint = 'chat' | 'responses' | 'compact' | 'messages' | 'inline';

const OPENAI_CACHE = ['prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'service_tier'];
const ANTHROPIC = ['cache_control', 'service_tier', 'metadata', 'inference_geo'];

/** Which caller fields each endpoint takes (Responses, compact, Chat Completions and Messages params). */
const FORWARDED: Record<FieldEndpoint, readonly string[]> = {
  chat: [...OPENAI_CACHE, 'safety_identifier', 'user'],
  responses: [...OPENAI_CACHE, 'safety_identifier', 'user'],
  // /responses/compact takes the cache and tier fields only.
  compact: OPENAI_CACHE,
  messages: ANTHROPIC,
  // The inline request is a generate request of the caller's conversation: its thinking config stays.
  inline: [...ANTHROPIC, 'thinking'],
};

/**
 * `service_tier` values an endpoint accepts, where it takes fewer than the caller may use:
 * /responses/compact lacks `scale` and `ultrafast`; Anthropic knows only `auto` and `standard_only`.
 */
const TIERS: Partial<Record<FieldEndpoint, ReadonlySet<string>>> = {
  compact: new Set(['auto', 'default', 'fast', 'flex', 'priority']),
  messages: new Set(['auto', 'standard_only']),
  inline: new Set(['auto', 'standard_only']),
};

/** The caller fields `endpoint` takes, in the caller's order; absent and null values are skipped. */
export function forwardedFields(fields: RequestFields | undefined, endpoint: FieldEndpoint): RequestFields {
  const out: RequestFields = {};
  if (!fields) return out;
  for (const key of FORWARDED[endpoint]) {
    const value = fields[key];
    if (value === undefined || value === null) continue;
    const tiers = TIERS[endpoint];
    if (key === 'service_tier' && tiers && !tiers.has(String(value))) continue;
    out[key] = value;
  }
  return out;
}
