import type { SummaryBand } from '../../../machines/index.js';
import type { Message } from '../../messages/message.js';
import { BudgetError } from '../../core/errors.js';
import { prepareHierarchicalBands } from '../../summary/hierarchical.js';
import { prepareLocalSummary, type PreparedSummary } from '../../summary/prepare.js';
import type { LocalFork } from './local-summarizer-options.js';
import type { LocalSummarySettings } from './local-summary-settings.js';

const BAND_ALLOWANCE = { older: 'abstract band input budget', newer: 'detail band input budget' } as const;

/** The runtime reads only `inputTokens`; the band and the prepared summary travel with it. */
export function toLocalFork(band: SummaryBand, prepared: PreparedSummary): LocalFork {
  return { band, prepared, inputTokens: prepared.inputTokens };
}

/** One band re-bounded alone: the unbounded split (same cuts as L4), then L1–L3 on that band. */
export function prepareOneBand(
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
