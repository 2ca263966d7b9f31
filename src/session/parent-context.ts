import type { CompactionMode } from '../../machines/index.js';
import type { Json } from '../messages/message.js';
import type { ToolSchema } from '../providers/types.js';

/** The active request envelope: what the agent's next request carries besides history. */
export interface RequestEnvelope {
  /** Provider kind or preset name of the request. */
  provider: string;
  model: string;
  /** System prompt. */
  system?: string;
  /** Ordered tool catalog. */
  tools?: ToolSchema[];
  /**
   * Top-level fields of the agent's own provider request (`prompt_cache_key`, `service_tier`,
   * `safety_identifier`, Anthropic `thinking` …): forwarded on the requests Compactor builds
   * for the same provider, each endpoint taking the ones its API accepts (O1).
   */
  requestFields?: Record<string, Json>;
}

/** The frozen parent prefix a summary or inline request may reuse (S2). */
export interface ParentContext {
  system?: string;
  tools?: ToolSchema[];
}

/** The compaction route as far as S2 is concerned. */
export interface ParentRoute {
  provider: string;
  label: string;
  model: string;
}

/**
 * S2: the envelope's system prompt and tool catalog are reused only when its provider and
 * model match the compaction route (so the provider's prompt cache can serve the prefix);
 * a model switch or a missing envelope leaves parent context absent (`null`).
 */
export function parentContextFor(
  envelope: RequestEnvelope | undefined,
  route: ParentRoute,
  mode: CompactionMode,
): ParentContext | null {
  if (!envelope || mode === 'modelSwitch') return null;
  const provider = envelope.provider.trim().toLowerCase();
  if (provider !== route.provider.toLowerCase() && provider !== route.label.toLowerCase()) return null;
  if (envelope.model !== route.model) return null;
  const context: ParentContext = {};
  if (envelope.system !== undefined) context.system = envelope.system;
  if (envelope.tools !== undefined) context.tools = envelope.tools;
  return context;
}

/** The envelope's request fields when it was made for the compaction route's provider (O1). */
export function requestFieldsFor(
  envelope: RequestEnvelope | undefined,
  route: ParentRoute,
): Record<string, Json> | undefined {
  if (!envelope?.requestFields) return undefined;
  const provider = envelope.provider.trim().toLowerCase();
  return provider === route.provider.toLowerCase() || provider === route.label.toLowerCase()
    ? envelope.requestFields
    : undefined;
}
