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
  /** NativeStandalone client, when the route has one. */
  standalone?: NativeStandaloneClient;
  /** NativeInline client, when the route has one. */
  inline?: NativeInlineClient;
  /** Local strategy (the universal fallback). */
  summarizer?: LocalSummarizer;
  /** Custom instructions for the native standalone endpoint. */
  instructions?: string;
  /** Frozen parent envelope reused by inline requests when provider and model match. */
  system?: string;
  tools?: ToolSchema[];
  /** The provider reports context-edit support (the inline edit ladder then clears too). */
  supportsContextEdits?: boolean;
  /** The caller's own request fields (cache/tier fields, Anthropic `thinking`), forwarded. */
  requestFields?: RequestFields;
  /** The configured API key values: a summary is stored with them redacted, and nothing else is. */
  secrets?: readonly string[];
  /** Capacity every native request must fit, its requested output counted; null/absent = unknown. */
  capacity?: number | null;
  /**
   * Whether a line of a kept message points to a removed original by its recall id (receipts).
   * Default: a clearing stub that names a recall id.
   */
  isPointer?: (line: string) => boolean;
}

/** A step whose client or summarizer the route lacks fails like a provider call, and is handled like one. */
export function unavailable(what: string): never {
  throw new ActorFailureError('provider', `${what} is not configured for this route`);
}

/** Estimated tokens of the history before and after a step; the machine decides whether it saved any. */
export function tokensOf(
  estimator: Estimator,
  before: readonly Message[],
  after: readonly Message[],
): { before: number; after: number } {
  return { before: estimator.history(before), after: estimator.history(after) };
}
