import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import type { Budgets, Limits } from '../projection/budgets.js';
import { BudgetError, ProviderError } from '../providers/errors.js';
import type { SummaryClient } from '../providers/types.js';
import { createOfflineSummarizer, OFFLINE_MODEL } from '../summary/offline/offline-summarizer.js';
import { prepareLocalSummary, toSummaryRequest } from '../summary/prepare.js';
import { loadSummaryPrompt } from '../summary/prompt.js';
import { rebuildHistory } from '../summary/rebuild.js';

/** What one local compaction pass did. */
export interface CompactOnceResult {
  /** The rebuilt history, or null when the pass failed or did not shrink the history. */
  history: Message[] | null;
  /** Estimated input tokens of the summary call (0 when none was made). */
  inputTokens: number;
  /** Estimated output tokens of the summary. */
  outputTokens: number;
  /** A summary call was made. */
  called: boolean;
}

/** Options of {@link compactOnce}. */
export interface CompactOnceOptions {
  estimator: Estimator;
  limits: Limits;
  budgets: Budgets;
  /** Summary client (default: the offline summarizer). */
  summarizer?: SummaryClient;
}

/**
 * One local compaction pass over a whole history (L1–L3 prepare, the summary call, L7
 * rebuild), as the session runs it, for replays and charts. A budget error or a provider
 * failure keeps the history (H3); anything else is a bug and is thrown.
 */
export async function compactOnce(
  history: readonly Message[],
  options: CompactOnceOptions,
): Promise<CompactOnceResult> {
  const est = options.estimator;
  const result: CompactOnceResult = { history: null, inputTokens: 0, outputTokens: 0, called: false };
  try {
    const prepared = prepareLocalSummary(history, {
      budget: options.budgets.summaryInputBudget,
      estimator: est,
      instructions: loadSummaryPrompt().instructions,
    });
    result.called = true;
    result.inputTokens = prepared.inputTokens + prepared.instructionsTokens;
    const summarizer = options.summarizer ?? createOfflineSummarizer({ estimator: est });
    const response = await summarizer.summarize(toSummaryRequest(prepared, { model: OFFLINE_MODEL }));
    result.outputTokens = est.text(response.text);
    const rebuilt = rebuildHistory(history, response.text, {
      estimator: est,
      continuityTailTokens: options.budgets.continuityTailTokens ?? 1_024,
      capacity: options.budgets.capacity,
      reserveOutput: options.limits.reservedOutput,
      prefixTokens: Math.max(0, options.limits.prefixTokens ?? 0),
    });
    if (rebuilt.tokens < est.history(history)) result.history = rebuilt.history;
  } catch (e) {
    if (!(e instanceof BudgetError || e instanceof ProviderError)) throw e;
  }
  return result;
}
