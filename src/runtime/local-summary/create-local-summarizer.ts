import type { SummaryBand } from '../../../machines/index.js';
import { BudgetError } from '../../core/errors.js';
import type { Message } from '../../messages/message.js';
import {
  prepareHierarchicalBands,
  rebuildHierarchicalHistory,
  type HierarchicalBands,
} from '../../summary/hierarchical.js';
import { splitContinuityTail } from '../../summary/continuity.js';
import { compactedHistoryBudget } from '../../summary/output-bound.js';
import { isSummaryMessage } from '../../summary/summary-message.js';
import { prepareLocalSummary, type PreparedSummary } from '../../summary/prepare.js';
import { rebuildHistory } from '../../summary/rebuild.js';
import { addSpanPointers, pointerLineCap } from '../../summary/span-pointers.js';
import { applyReinjection, buildReinjection } from '../../summary/reinject.js';
import { templateProblem } from '../../summary/repair.js';
import type {
  LocalFork,
  LocalSummarizerOptions,
  LocalSummarizerWithWarnings,
} from './local-summarizer-options.js';
import { requestLocalSummary, SummaryPassWarnings } from './local-summary-request.js';
import { resolveLocalSummarySettings, type LocalSummarySettings } from './local-summary-settings.js';
import { PrefixRequests } from './summary-prefix.js';

/**
 * Implements the runtime's {@link LocalSummarizer} with the src/summary pipeline: preparation
 * within the summary input budget (previews of large results, complete recent groups), one summary
 * call per fork (the agent's system prompt and tools when the route matches, the output reserve,
 * failures naming provider/model, input_tokens and budget; capacity rejections stay
 * `ContextCapacityError` for the halved-budget retry), the summary template check, and the rebuild
 * (summary, kept messages, continuity tail) followed by re-injection of durable context.
 * Hierarchical bands map `older` → abstract, `newer` → detail.
 */
export function createLocalSummarizer(opts: LocalSummarizerOptions): LocalSummarizerWithWarnings {
  const s = resolveLocalSummarySettings(opts);
  const passWarnings = new SummaryPassWarnings();
  const prefix = new PrefixRequests(s);
  const request = (f: LocalFork, band: SummaryBand, signal: AbortSignal, previous?: string) =>
    prefix.send(f, () => requestLocalSummary(s, f, band, signal, previous));
  return {
    compactable(history) {
      const { verbatimStart } = splitContinuityTail(history, s.tailTokens, s.est);
      return history.slice(0, verbatimStart).filter((m) => m.role !== 'system' && !isSummaryMessage(m))
        .length;
    },
    prepare(history, budget) {
      passWarnings.clear();
      const over = prefix.fork();
      if (over !== null) return over;
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
      const over = prefix.bands(prepareHierarchicalBands(history, s.bandOptions(null)));
      if (over !== null) return over;
      const bands: HierarchicalBands = prepareHierarchicalBands(history, s.bandOptions(s.fit(budget)));
      return { older: toLocalFork('older', bands.abstract), newer: toLocalFork('newer', bands.detail) };
    },
    prepareBand(history, band, budget) {
      // A restored pass asks again over the last request; a retry after the provider refused it does not.
      const over = prefix.bands(prepareHierarchicalBands(history, s.bandOptions(null)));
      if (over !== null) return over[band];
      return toLocalFork(band, prepareOneBand(s, history, band, s.fit(budget)));
    },
    request: (f, band, signal) => request(f, band, signal),
    repair: (f, band, previous, signal) => request(f, band, signal, previous),
    followsTemplate(text, band) {
      // The abstract band is one or two sentences by design (ABSTRACT_INSTRUCTIONS): no template.
      if (band === 'older') return text.trim() !== '';
      return templateProblem(text, s.prompt.sections, s.est) === null;
    },
    warnings: () => passWarnings.list(),
    summaryCache: () => prefix.report(),
    rebuild(history, summaries) {
      // The summaries the machine settled on: one that still misses sections is reported.
      passWarnings.clear();
      const detail = summaries.length === 2 ? summaries[1] : summaries[0];
      const band = summaries.length === 2 ? 'newer' : 'flat';
      const problem = detail === undefined ? null : templateProblem(detail, s.prompt.sections, s.est);
      if (problem !== null) passWarnings.accept(band, problem.missing);
      return rebuildLocal(s, history, summaries);
    },
  };
}

// Preparing the forks the summaries are asked for, and rebuilding the history from them.

const BAND_ALLOWANCE = { older: 'abstract band input budget', newer: 'detail band input budget' } as const;

/** The runtime reads only `inputTokens`; the band and the prepared summary travel with it. */
function toLocalFork(band: SummaryBand, prepared: PreparedSummary): LocalFork {
  return { band, prepared, inputTokens: prepared.inputTokens };
}

/** One band re-bounded alone: the two-band split's cuts, then previews and bounding of that band. */
function prepareOneBand(
  s: LocalSummarySettings,
  history: readonly Message[],
  band: 'older' | 'newer',
  budget: number | null,
) {
  const split = prepareHierarchicalBands(history, s.bandOptions(null));
  const base = band === 'older' ? split.abstract : split.detail;
  if (base.fork.length > 0)
    return prepareLocalSummary(base.fork, {
      budget,
      estimator: s.est,
      instructions: base.instructions,
      allowance: BAND_ALLOWANCE[band],
      includeLeading: true,
    });
  if (budget !== null && base.instructionsTokens > budget)
    throw new BudgetError(BAND_ALLOWANCE[band], base.instructionsTokens, budget);
  return { ...base, budget };
}

/**
 * The next history from the summaries (flat: one; hierarchical: older, newer), the kept
 * messages and the continuity tail, the summary's pointer lines to what it replaced, then the
 * re-injection of the instructions and the most recently touched files.
 */
function rebuildLocal(
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
  const window = compactedHistoryBudget(
    rebuildOptions.capacity,
    rebuildOptions.reservedOutput,
    rebuildOptions.prefixTokens,
  );
  // The summary names what it replaced by recall ids, within the room the window has left.
  const pointed = addSpanPointers(history, rebuilt.history, {
    estimator: s.est,
    maxLines: pointerLineCap(s.capacity),
    roomTokens: window === null ? Infinity : window - rebuilt.tokens,
  });
  if (reinjectBudget === 0) return pointed;
  // Re-injection only uses room the rebuilt window has left, so the next request still fits.
  const tokens = s.est.history(pointed);
  const room = window === null ? reinjectBudget : Math.min(reinjectBudget, window - tokens);
  if (room <= 0) return pointed;
  return applyReinjection(pointed, buildReinjection(history, { budgetTokens: room, estimator: s.est }));
}
