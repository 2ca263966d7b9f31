import type { Estimator } from '../../src/estimate/estimator.js';
import type { Message } from '../../src/messages/message.js';
import type { Budgets, Limits } from '../../src/projection/budgets.js';
import type { ClearingPolicy } from '../../src/projection/clearing-policy.js';
import type { CompactionWaitSettings } from '../../src/projection/session-settings.js';

/** A Compactor setting under test: clearing settings and the compaction wait, in one flat record. */
export type CompactorSetting = Partial<ClearingPolicy> & Partial<CompactionWaitSettings>;

/** What a retention policy knows when it builds one request (the window it runs in). */
export interface PolicyContext {
  estimator: Estimator;
  limits: Limits;
  /** Budgets resolved from {@link PolicyContext.limits}. */
  budgets: Budgets;
}

/** Where a policy's implementation comes from (the report says which ones ran real code). */
export type PolicySource = 'compactor' | 'library' | 'reimplemented' | 'baseline';

/**
 * A request-time retention policy: turns the live (normalized) history into the messages
 * sent on the next request. Must not mutate its input.
 */
export interface RetentionPolicy {
  /** Short stable id (report rows, chart legends). */
  readonly name: string;
  /** One line: which system's rule, with which constants. */
  readonly description: string;
  readonly source: PolicySource;
  project(history: readonly Message[], ctx: PolicyContext): Promise<readonly Message[]>;
  /**
   * A Compactor setting: the clearing policy and compaction wait a `createCompactorSession`
   * gets. The replay then runs the product itself and `project` only serves tests of the projection.
   */
  readonly clearing?: CompactorSetting;
}
