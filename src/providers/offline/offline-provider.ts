import type { Estimator } from '../../estimate/estimator.js';
import { createOfflineSummarizer, OFFLINE_MODEL, OFFLINE_PROVIDER } from '../../summary/index.js';
import type { StrategyChoice } from '../strategy.js';
import type { SummaryClient } from '../types.js';

/**
 * Context window assumed for the offline route when neither `limits.capacity` nor a
 * catalog row says otherwise: the smallest window current agent models ship with, so
 * budgets derived from it are safe for any of them.
 */
export const OFFLINE_CONTEXT_WINDOW = 32_000;

const OFFLINE_STRATEGY: StrategyChoice = {
  kind: 'local',
  reason: 'the embedded offline summarizer (no network) is a Local route',
};

/**
 * The embedded offline route as one object: no wire, no network, no key; summaries come from
 * the deterministic summarizer in src/summary/offline, always with the Local strategy.
 */
export const offlineProvider = {
  name: OFFLINE_PROVIDER,
  model: OFFLINE_MODEL,
  contextWindow: OFFLINE_CONTEXT_WINDOW,
  strategy: OFFLINE_STRATEGY,
  /** Whether a provider name (as the user typed it) means this route. */
  isNamed: (provider: string): boolean => provider.trim().toLowerCase() === OFFLINE_PROVIDER,
  summaryClient: (estimator: Estimator): SummaryClient => createOfflineSummarizer({ estimator }),
} as const;
