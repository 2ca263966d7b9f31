import type { Estimator } from '../../estimate/estimator.js';
import type { Message } from '../../messages/message.js';
import type { RequestFields } from '../../providers/request-fields.js';
import type { NativeInlineClient, NativeStandaloneClient, ToolSchema } from '../../providers/types.js';
import { ActorFailureError } from '../../core/errors.js';
import type { LocalSummarizer } from '../local-summary/local-summarizer.js';

// What the compaction actors share, apart from the actors themselves, so the native and the
// summary actors can live in files of their own.

/** Everything a compaction pass needs besides the history. */
export interface CompactionDeps {
  estimator: Estimator;
  /** S1: NativeStandalone client, when the route has one. */
  standalone?: NativeStandaloneClient;
  /** S1: NativeInline client, when the route has one. */
  inline?: NativeInlineClient;
  /** Local strategy (the universal fallback). */
  summarizer?: LocalSummarizer;
  /** Custom instructions for the native standalone endpoint (O3). */
  instructions?: string;
  /** Frozen parent envelope reused by inline requests when provider and model match (S2). */
  system?: string;
  tools?: ToolSchema[];
  /** A1: the provider reports context-edit support. */
  supportsContextEdits?: boolean;
  /** The caller's own request fields (cache/tier fields, Anthropic `thinking`), forwarded (O1, A1). */
  requestFields?: RequestFields;
  /** The configured API key values: a summary is stored with them redacted, and nothing else is. */
  secrets?: readonly string[];
  /** Capacity every native request must fit, its requested output counted (L1); null/absent = unknown. */
  capacity?: number | null;
}

/** A step whose client or summarizer the route lacks fails like a provider call, and is handled like one. */
export function unavailable(what: string): never {
  throw new ActorFailureError('provider', `${what} is not configured for this route`);
}

/** S3/H3: a pass counts when it leaves fewer items or fewer estimated tokens. */
export function shrank(estimator: Estimator, before: readonly Message[], after: readonly Message[]): boolean {
  return after.length < before.length || estimator.history(after) < estimator.history(before);
}
