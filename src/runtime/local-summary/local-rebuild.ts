import type { Message } from '../../messages/message.js';
import { prepareHierarchicalBands, rebuildHierarchicalHistory } from '../../summary/hierarchical.js';
import { compactedHistoryBudget } from '../../summary/output-bound.js';
import { rebuildHistory } from '../../summary/rebuild.js';
import { applyReinjection, buildReinjection } from '../../summary/reinject.js';
import type { LocalSummarySettings } from './local-summary-settings.js';

/**
 * L7: the next history from the summaries (flat: one; hierarchical: older, newer), the kept
 * messages and the continuity tail, then the §14 re-injection of the instructions and the
 * most recently touched files.
 */
export function rebuildLocal(
  s: LocalSummarySettings,
  history: readonly Message[],
  summaries: readonly string[],
): Message[] {
  const { rebuildOptions, reinjectBudget } = s;
  const rebuilt =
    summaries.length === 2
      ? rebuildHierarchicalHistory(
          prepareHierarchicalBands(history, s.bandOptions(null)),
          summaries[0],
          summaries[1],
          rebuildOptions,
        )
      : rebuildHistory(history, summaries[0] ?? '', rebuildOptions);
  if (reinjectBudget === 0) return rebuilt.history;
  // Re-injection only uses room the rebuilt window has left, so the next request still fits.
  const window = compactedHistoryBudget(
    rebuildOptions.capacity,
    rebuildOptions.reserveOutput,
    rebuildOptions.prefixTokens,
  );
  const room = window === null ? reinjectBudget : Math.min(reinjectBudget, window - rebuilt.tokens);
  if (room <= 0) return rebuilt.history;
  return applyReinjection(
    rebuilt.history,
    buildReinjection(history, { budgetTokens: room, estimator: s.est }),
  );
}
