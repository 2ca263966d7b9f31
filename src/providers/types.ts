import type { Json, Message } from '../messages/message.js';
import type { RequestFields } from './request-fields.js';

/**
 * The contract between the compaction engine and whatever produces summaries or native
 * compactions: real providers over HTTP (src/providers/*) and the embedded offline
 * summarizer (src/summary/offline). Machines never see these types directly; the actors
 * in src/runtime adapt them.
 */

/** A tool schema as listed in the frozen request envelope (listed, but tool use disabled). */
export interface ToolSchema {
  name: string;
  description?: string;
  /** JSON Schema of the parameters, verbatim. */
  parameters?: unknown;
  /**
   * A provider's own tool that is not a function (web search, a shell, a patch grammar …): the
   * tool exactly as the client wrote it and the wire it was written for. It counts toward the
   * request's fixed prefix with all its JSON, goes back out unchanged on that wire only, and is
   * never rewritten as a function tool (the provider would then offer a tool that does not exist).
   */
  native?: { wire: 'chat' | 'responses' | 'messages'; tool: Json };
}

/** One-shot summary request (Local strategy). */
export interface SummaryRequest {
  model: string;
  /** Frozen parent system prompt, reused only when provider and model match. */
  system?: string;
  /** Frozen tool catalog, sent with tool use disabled. */
  tools?: ToolSchema[];
  /** The bounded fork to summarize, protocol-valid. */
  messages: Message[];
  /** Summary instructions (the summary prompt), sent as the final user message. */
  instructions: string;
  /** Explicit output reserve for the summary, when the route sets one. */
  maxOutputTokens?: number;
  /** The caller's own request fields; the wire forwards the cache/tier ones it accepts. */
  requestFields?: RequestFields;
  /**
   * `messages` are the last request sent, unchanged: the wire keeps what the provider's prompt
   * cache keys on as the agent sent it (Anthropic: tool use left on, a cache breakpoint set).
   */
  prefix?: boolean;
}

/** Token usage a provider reported for one call. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
}

/** What a summary call returned: the summary text, why generation stopped, and usage when reported. */
export interface SummaryResponse {
  text: string;
  /** `length` means the output limit cut the summary (such a summary is rejected). */
  finishReason: 'stop' | 'length' | 'other';
  usage?: Usage;
}

/** Produces one summary for one request. Implementations honour `signal`. */
export interface SummaryClient {
  readonly provider: string;
  readonly model: string;
  /**
   * Summaries go to the model of the request being compacted, whichever it is (a proxy writes
   * each session's summaries with that session's own model), so `model` is only a label.
   */
  readonly followsRequestModel?: boolean;
  summarize(request: SummaryRequest, signal?: AbortSignal): Promise<SummaryResponse>;
}

/** NativeStandalone: `POST {base}/responses/compact`. */
export interface StandaloneCompactRequest {
  model: string;
  input: Message[];
  instructions?: string;
  serviceTier?: string;
  promptCacheKey?: string;
  promptCacheRetention?: string;
  promptCacheOptions?: unknown;
  /** The caller's own request fields; the cache/tier ones are forwarded. */
  requestFields?: RequestFields;
}
/** What a NativeStandalone compaction returned. */
export interface StandaloneCompactResult {
  /** Returned items (messages and opaque compaction items), replayed verbatim next request. */
  items: Message[];
  usage?: Usage;
}
/** A provider client that compacts with `POST /responses/compact` (NativeStandalone). */
export interface NativeStandaloneClient {
  readonly provider: string;
  readonly model: string;
  compactStandalone(
    request: StandaloneCompactRequest,
    signal?: AbortSignal,
  ): Promise<StandaloneCompactResult>;
}

/** NativeInline: a generate request carrying the context-management edit ladder. */
export interface InlineCompactRequest {
  model: string;
  system?: string;
  tools?: ToolSchema[];
  messages: Message[];
  /** Whether the provider reports context-edit support (the clearing edits are sent only then). */
  supportsContextEdits: boolean;
  maxOutputTokens?: number;
  /** Custom compaction instructions, sent in the compact edit's `instructions`. */
  instructions?: string;
  /** The caller's own request fields: cache/tier fields and its `thinking` config are kept. */
  requestFields?: RequestFields;
}
/** What a NativeInline request returned: the compacted messages, or why it fell back to Local. */
export type InlineCompactResult =
  | { kind: 'compacted'; messages: Message[]; usage?: Usage }
  | { kind: 'fallback'; reason: 'no-compaction' | 'rejected-edit' | 'null-content'; detail?: string };
/** A provider client that compacts inside a generate request (NativeInline). */
export interface NativeInlineClient {
  readonly provider: string;
  readonly model: string;
  compactInline(request: InlineCompactRequest, signal?: AbortSignal): Promise<InlineCompactResult>;
}

/** Route facts used for strategy selection and budgets. */
export interface Route {
  /** Provider kind: openai, openresponses, vercel, xai, anthropic, openai-compatible, anthropic-compatible, offline. */
  provider: string;
  model: string;
  baseUrl?: string;
  /** Model context window in tokens, when known. */
  contextWindow?: number;
  /** Model max output tokens, when known. */
  maxOutputTokens?: number;
  /** Hosts trusted for native compaction; defaults to the provider's official hosts. */
  nativeHosts?: readonly string[];
  /** Catalog verdict: false forces Local; true adds an xAI model to the allowlist. */
  nativeCompaction?: boolean;
}
