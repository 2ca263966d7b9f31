import type { PrepareSummaryInputInput } from '../../../machines/index.js';
import { unavailable, type CompactionDeps } from '../compaction/compaction-deps.js';
import type { LocalSummarizer, PreparedFork } from './local-summarizer.js';
import type { MessageStore } from '../message-store.js';

/**
 * The Local strategy's prepared forks for one provided compaction machine, keyed by turn, band
 * and attempt. Preparing is pure and deterministic, so forks are never persisted: after a
 * restore the map is empty and a fork is prepared again when its summary is requested.
 */
export interface SummaryForks {
  readonly forks: Map<string, PreparedFork>;
  /** The Local summarizer; a route without one fails as a provider failure. */
  summarizer(): LocalSummarizer;
  key(i: { turnId: string; band: string; attempt: number }): string;
  prepare(i: PrepareSummaryInputInput): PreparedFork;
}

export function createSummaryForks(deps: CompactionDeps, store: MessageStore): SummaryForks {
  const summarizer = (): LocalSummarizer => deps.summarizer ?? unavailable('a local summarizer');
  return {
    forks: new Map<string, PreparedFork>(),
    summarizer,
    key: (i) => `${i.turnId}:${i.band}:${i.attempt}`,
    prepare(i) {
      const history = store.get(i.historyRef);
      const s = summarizer();
      return i.band === 'flat' ? s.prepare(history, i.budget) : s.prepareBand(history, i.band, i.budget);
    },
  };
}
