import { prepareHierarchicalBands, type HierarchicalBands } from '../../summary/hierarchical.js';
import { splitContinuityTail } from '../../summary/continuity.js';
import { isSummaryMessage } from '../../summary/summary-message.js';
import { prepareLocalSummary } from '../../summary/prepare.js';
import { REINJECT_BUDGET_MAX_TOKENS } from '../../summary/reinject.js';
import { templateProblem } from '../../summary/repair.js';
import { prepareOneBand, toLocalFork } from './local-forks.js';
import { rebuildLocal } from './local-rebuild.js';
import type { LocalSummarizerOptions, LocalSummarizerWithWarnings } from './local-summarizer-options.js';
import { requestLocalSummary } from './local-summary-request.js';
import { resolveLocalSummarySettings } from './local-summary-settings.js';
import { SummaryPassWarnings } from './summary-pass-warnings.js';

/**
 * Ceiling of the §14 re-injection budget when none is given; the default itself scales with
 * the window (`defaultReinjectBudget`: min(4,000, floor(capacity × 0.05))).
 */
export const DEFAULT_REINJECT_BUDGET_TOKENS = REINJECT_BUDGET_MAX_TOKENS;

/**
 * Implements the runtime's {@link LocalSummarizer} with the src/summary pipeline: L1–L3
 * preparation, one summary call per fork (S2 envelope, L1 output reserve, L6 failures with
 * provider/model, input_tokens and budget; capacity rejections stay `ContextCapacityError`
 * for L5), the L8 template check, and the L7 rebuild followed by §14 re-injection.
 * Hierarchical bands map `older` → abstract, `newer` → detail (L4).
 */
export function createLocalSummarizer(opts: LocalSummarizerOptions): LocalSummarizerWithWarnings {
  const s = resolveLocalSummarySettings(opts);
  const passWarnings = new SummaryPassWarnings();
  return {
    compactable(history) {
      const { verbatimStart } = splitContinuityTail(history, s.tailTokens, s.est);
      return history.slice(0, verbatimStart).filter((m) => m.role !== 'system' && !isSummaryMessage(m))
        .length;
    },
    prepare(history, budget) {
      passWarnings.clear();
      return toLocalFork(
        'flat',
        prepareLocalSummary(history, {
          budget: s.fit(budget),
          estimator: s.est,
          instructions: s.instructions,
        }),
      );
    },
    prepareBands(history, budget) {
      passWarnings.clear();
      const bands: HierarchicalBands = prepareHierarchicalBands(history, s.bandOptions(s.fit(budget)));
      return { older: toLocalFork('older', bands.abstract), newer: toLocalFork('newer', bands.detail) };
    },
    prepareBand(history, band, budget) {
      passWarnings.forget(band);
      return toLocalFork(band, prepareOneBand(s, history, band, s.fit(budget)));
    },
    request: (f, band, signal) => requestLocalSummary(s, passWarnings, f, band, signal),
    followsTemplate(text, band) {
      // The abstract band is one or two sentences by design (ABSTRACT_INSTRUCTIONS): no template.
      if (band === 'older') return text.trim() !== '';
      return passWarnings.accepted(text) || templateProblem(text, s.prompt.sections, s.est) === null;
    },
    warnings: () => passWarnings.list(),
    repairRequests: () => passWarnings.repairRequests(),
    rebuild: (history, summaries) => rebuildLocal(s, history, summaries),
  };
}
