import { fromPromise } from 'xstate';
import {
  compactionMachine,
  type RebuildHistoryInput,
  type RebuildHistoryOutput,
} from '../../../machines/index.js';
import { shrank, type CompactionDeps } from './compaction-deps.js';
import type { MessageStore } from '../message-store.js';
import { compactInline, compactStandalone } from './native-actors.js';
import {
  provideCapacityRetry,
  provideHierarchicalSummary,
} from '../local-summary/local-summary.implementations.js';
import { createSummaryForks, type SummaryForks } from '../local-summary/summary-forks.js';

/** L7: the summaries and the kept messages become the next history. */
const rebuildHistory = (deps: CompactionDeps, store: MessageStore, sf: SummaryForks) =>
  fromPromise<RebuildHistoryOutput, RebuildHistoryInput>(async ({ input }) => {
    const summaries = input.summaryRefs.map((ref) => store.getText(ref));
    const before = store.get(input.historyRef);
    const rebuilt = sf.summarizer().rebuild(before, summaries, input.mode);
    const ref = store.put(`${input.turnId}:history:compacted`, rebuilt);
    return { historyRef: ref, itemCount: rebuilt.length, shrank: shrank(deps.estimator, before, rebuilt) };
  });

/**
 * Actor implementations for the compaction, capacityRetry and hierarchicalSummary machines,
 * and the machine with all of them provided. Provider calls are keyed by turn, actor, band and
 * attempt in the store, so a restored pass reuses a call that had already finished.
 */
export function provideCompaction(deps: CompactionDeps, store: MessageStore) {
  const sf = createSummaryForks(deps, store);
  const capacityRetry = provideCapacityRetry(deps, store, sf);
  return compactionMachine.provide({
    actors: {
      compactStandalone: compactStandalone(deps, store),
      compactInline: compactInline(deps, store),
      capacityRetry,
      hierarchicalSummary: provideHierarchicalSummary(store, sf, capacityRetry),
      rebuildHistory: rebuildHistory(deps, store, sf),
    },
  });
}
