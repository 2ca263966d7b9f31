import type { CompactionMode } from '../../machines/index.js';
import type { Json } from '../messages/message.js';
import type { ToolSchema } from '../providers/types.js';
import type { SessionRoute } from './route.js';

/** Wire protocols a request can be written in (a request file says which one it used). */
export type RequestWire = 'chat' | 'responses' | 'messages';

/**
 * The active request envelope: what the agent's next request carries besides history. It
 * names the provider it goes to, or (for a saved request file, whose provider is unknown)
 * the wire protocol it was written in; at least one of the two.
 */
export interface RequestEnvelope {
  /** Provider kind or preset name of the request. */
  provider?: string;
  /** Wire protocol of the request: `chat`, `responses` or `messages`. */
  wire?: RequestWire;
  model: string;
  /** System prompt. */
  system?: string;
  /** Ordered tool catalog. */
  tools?: ToolSchema[];
  /**
   * Top-level fields of the agent's own provider request (`prompt_cache_key`, `service_tier`,
   * `safety_identifier`, Anthropic `thinking` …): forwarded on the requests Compactor builds
   * for the same provider, each endpoint taking the ones its API accepts.
   */
  requestFields?: Record<string, Json>;
}

/** The frozen parent prefix a summary or inline request may reuse. */
export interface ParentContext {
  system?: string;
  tools?: ToolSchema[];
}

/** The fields of the compaction route that decide whether the parent prefix is reused. */
type ParentRoute = Pick<SessionRoute, 'provider' | 'label' | 'model' | 'wire' | 'caller'>;

/**
 * The envelope's system prompt and tool catalog are reused only when the request went to
 * the compaction route's model (so the provider's prompt cache can serve the prefix): same
 * model, and the same provider (kind or preset name) or, for an envelope that only knows its
 * wire protocol, the route's wire. When summaries come from the caller's own model, the
 * caller's endpoint is the agent's, so the model alone decides (always, for a summarizer that
 * follows the request's model); a summary of a tool loop then also carries the tools its
 * blocks refer to, which some APIs (Anthropic's) require. A model switch or a missing
 * envelope leaves parent context absent (`null`).
 */
export function parentContextFor(
  envelope: RequestEnvelope | undefined,
  route: ParentRoute,
  mode: CompactionMode,
): ParentContext | null {
  if (!envelope || mode === 'modelSwitch') return null;
  if (!sameModel(envelope, route)) return null;
  const context: ParentContext = {};
  if (envelope.system !== undefined) context.system = envelope.system;
  if (envelope.tools !== undefined) context.tools = envelope.tools;
  return context;
}

/**
 * The tools a summary or inline request on the route lists (tool use disabled): the parent
 * context's when it is reused. Otherwise none, except on a wire that refuses tool blocks from a
 * request that does not define its tools (Anthropic Messages): there the envelope's tools go all
 * the same, whatever model the request went to, or a tool loop could not be summarized at all.
 */
export function requestToolsFor(
  envelope: RequestEnvelope | undefined,
  route: ParentRoute,
  parent: ParentContext | null,
): ToolSchema[] | undefined {
  if (parent !== null) return parent.tools;
  return route.wire === 'messages' && (envelope?.tools?.length ?? 0) > 0 ? envelope!.tools : undefined;
}

/** The envelope's request went to the model the route's summaries are written with. */
function sameModel(envelope: RequestEnvelope, route: ParentRoute): boolean {
  if (route.caller !== undefined) return route.caller.model === null || route.caller.model === envelope.model;
  return envelope.model === route.model && sameDestination(envelope, route);
}

/**
 * The envelope's request fields when it was made for the compaction route's provider (or,
 * for a request file, written in the route's wire), whatever the model.
 */
export function requestFieldsFor(
  envelope: RequestEnvelope | undefined,
  route: ParentRoute,
): Record<string, Json> | undefined {
  return envelope?.requestFields && sameDestination(envelope, route) ? envelope.requestFields : undefined;
}

/** The envelope went to the route's provider (by kind or preset name), or was written in its wire. */
function sameDestination(envelope: RequestEnvelope, route: ParentRoute): boolean {
  if (envelope.provider !== undefined) {
    const provider = envelope.provider.trim().toLowerCase();
    return provider === route.provider.toLowerCase() || provider === route.label.toLowerCase();
  }
  return envelope.wire !== undefined && envelope.wire === route.wire;
}
