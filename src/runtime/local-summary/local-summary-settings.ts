import type { Estimator } from '../../estimate/estimator.js';
import { CONTINUITY_TAIL_MAX_TOKENS } from '../../projection/budgets.js';
import { ABSTRACT_MAX_OUTPUT_TOKENS, type BandOptions } from '../../summary/hierarchical.js';
import { loadSummaryPrompt, type SummaryPrompt } from '../../summary/prompt.js';
import type { RebuildOptions } from '../../summary/rebuild.js';
import {
  defaultSummaryOutputTokens,
  fitBudget,
  frozenPrefixTokens,
  summaryRequestAllowance,
} from '../../summary/request-fit.js';
import type { LocalSummarizerOptions } from './local-summarizer-options.js';

/**
 * What a local summarizer works out once from its options: the prompt, the frozen prefix and
 * the input allowance every call must fit. Preparing, requesting and rebuilding read the same
 * values, so they can live in files of their own and still agree.
 */
export interface LocalSummarySettings {
  readonly opts: LocalSummarizerOptions;
  readonly est: Estimator;
  readonly prompt: SummaryPrompt;
  /** The prompt's instructions, with the user's custom ones appended. */
  readonly instructions: string;
  readonly model: string;
  readonly tailTokens: number;
  readonly capacity: number | null;
  /** Tokens of the frozen system prompt and tools every call sends. */
  readonly frozen: number;
  /** A fork budget cut to what the request may hold. */
  fit(budget: number | null): number | null;
  readonly abstractMax: number;
  readonly reinjectBudget: number;
  bandOptions(budget: number | null): BandOptions;
  readonly rebuildOptions: RebuildOptions;
}

export function resolveLocalSummarySettings(opts: LocalSummarizerOptions): LocalSummarySettings {
  const est = opts.estimator;
  const prompt = loadSummaryPrompt(opts.promptVersion);
  const custom = opts.instructions?.trim();
  const instructions = custom
    ? `${prompt.instructions}\n\nAdditional instructions from the user:\n${custom}`
    : prompt.instructions;
  const tailTokens = opts.budgets.continuityTailTokens ?? CONTINUITY_TAIL_MAX_TOKENS;
  // The request itself must fit the capacity: frozen prefix and requested output count.
  // The default output is subtracted too, so the whole safety headroom stays free for what a
  // provider counts beyond our estimate (content-block and tool-call metadata).
  const capacity = opts.budgets.capacity;
  const frozen = frozenPrefixTokens(opts.system, opts.tools, est);
  const allowance = summaryRequestAllowance(
    capacity,
    frozen,
    opts.summaryOutputLimit ?? defaultSummaryOutputTokens(capacity),
  );
  return {
    opts,
    est,
    prompt,
    instructions,
    model: opts.model ?? opts.client.model,
    tailTokens,
    capacity,
    frozen,
    fit: (budget) => fitBudget(budget, allowance),
    abstractMax: opts.abstractMaxOutputTokens ?? ABSTRACT_MAX_OUTPUT_TOKENS,
    // Off unless asked: every result a pass removes keeps a recall id, and re-injected reads
    // made each pass leave more behind, so passes came sooner and cost more than no clearing.
    reinjectBudget: Math.max(0, opts.reinjectBudgetTokens ?? 0),
    bandOptions: (budget) => ({ budget, estimator: est, instructions, continuityTailTokens: tailTokens }),
    rebuildOptions: {
      estimator: est,
      continuityTailTokens: tailTokens,
      capacity: opts.budgets.capacity,
      reservedOutput: opts.reservedOutput ?? 0,
      prefixTokens: opts.prefixTokens ?? 0,
    },
  };
}
