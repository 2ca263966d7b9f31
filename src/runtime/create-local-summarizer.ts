import type { SummaryBand } from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { CONTINUITY_TAIL_MAX_TOKENS, type Budgets } from '../projection/budgets.js';
import { BudgetError } from '../providers/errors.js';
import type { RequestFields } from '../providers/request-fields.js';
import type { SummaryClient, SummaryResponse, ToolSchema } from '../providers/types.js';
import { summaryFailure, requireSummaryText, type SummaryAttempt } from '../summary/diagnostics.js';
import {
  ABSTRACT_MAX_OUTPUT_TOKENS,
  prepareHierarchicalBands,
  rebuildHierarchicalHistory,
  type HierarchicalBands,
} from '../summary/hierarchical.js';
import { compactedHistoryBudget } from '../summary/output-bound.js';
import { splitContinuityTail } from '../summary/continuity.js';
import { isSummaryMessage } from '../summary/summary-message.js';
import { prepareLocalSummary, toSummaryRequest, type PreparedSummary } from '../summary/prepare.js';
import { loadSummaryPrompt } from '../summary/prompt.js';
import { rebuildHistory, type RebuildOptions } from '../summary/rebuild.js';
import {
  applyReinjection,
  buildReinjection,
  defaultReinjectBudget,
  REINJECT_BUDGET_MAX_TOKENS,
} from '../summary/reinject.js';
import { instructionsTokens as measureInstructions } from '../summary/preview.js';
import {
  defaultSummaryOutputTokens,
  fitBudget,
  frozenPrefixTokens,
  summaryRequestAllowance,
} from '../summary/request-fit.js';
import {
  summarizeWithRepair,
  summaryWarning,
  templateProblem,
  type SummaryWarning,
} from '../summary/repair.js';
import type { LocalSummarizer, PreparedFork } from './local-summarizer.js';

/**
 * Ceiling of the §14 re-injection budget when none is given; the default itself scales with
 * the window (`defaultReinjectBudget`: min(4,000, floor(capacity × 0.05))).
 */
export const DEFAULT_REINJECT_BUDGET_TOKENS = REINJECT_BUDGET_MAX_TOKENS;

/** Options of {@link createLocalSummarizer}. */
export interface LocalSummarizerOptions {
  /** The summary client of the route (HTTP or the offline summarizer). */
  client: SummaryClient;
  estimator: Estimator;
  /** `resolveBudgets(limits)`: capacity (output bounding) and continuity tail (L7) are read. */
  budgets: Pick<Budgets, 'capacity' | 'continuityTailTokens'>;
  /** Model named in the request (default `client.model`). */
  model?: string;
  /** S2 frozen system prompt; pass it only when provider and model match the parent envelope. */
  system?: string;
  /** S2 frozen tool catalog (sent with tool use disabled); same rule as `system`. */
  tools?: ToolSchema[];
  /** The caller's own request fields; the summary request forwards the cache/tier ones (O1). */
  requestFields?: RequestFields;
  /** L1 explicit output reserve of the summary call; also subtract it in `Limits.summaryOutputLimit`. */
  maxOutputTokens?: number;
  /** Custom `/compact` instructions, appended to the L8 prompt. */
  instructions?: string;
  /** L8 prompt version (default summary-v1). */
  promptVersion?: string;
  /**
   * L4 output cap of the abstract (older) band, default VT Code's 150 (the offline summarizer
   * answers that band in a condensed form that fits it).
   */
  abstractMaxOutputTokens?: number;
  /**
   * §14 re-injection budget (default `min(4,000, floor(capacity × 0.05))`, 4,000 for an
   * unknown window; 0 disables). Capped by room left in the rebuilt window.
   */
  reinjectBudgetTokens?: number;
  /** Output tokens the next request reserves (L7 output bounding). */
  reserveOutput?: number;
  /** Frozen system + tool schema tokens of the next request (L7 output bounding). */
  prefixTokens?: number;
}

/** A fork prepared by {@link createLocalSummarizer}: the summary pipeline's fork plus its band. */
export interface LocalFork extends PreparedFork {
  readonly band: SummaryBand;
  readonly prepared: PreparedSummary;
}

const CALL_KIND = { flat: 'flat', older: 'abstract', newer: 'detail' } as const;
const BAND_ALLOWANCE = { older: 'abstract band input budget', newer: 'detail band input budget' } as const;

function isAbort(e: unknown): boolean {
  return e instanceof Error && e.name === 'AbortError';
}

/** The summarizer, plus the §14 warnings of the pass it is running. */
export interface LocalSummarizerWithWarnings extends LocalSummarizer<LocalFork> {
  warnings(): SummaryWarning[];
}

/**
 * Implements the runtime's {@link LocalSummarizer} with the src/summary pipeline: L1–L3
 * preparation, one summary call per fork (S2 envelope, L1 output reserve, L6 failures with
 * provider/model, input_tokens and budget; capacity rejections stay `ContextCapacityError`
 * for L5), the L8 template check, and the L7 rebuild followed by §14 re-injection.
 * Hierarchical bands map `older` → abstract, `newer` → detail (L4).
 */
export function createLocalSummarizer(opts: LocalSummarizerOptions): LocalSummarizerWithWarnings {
  const est = opts.estimator;
  const prompt = loadSummaryPrompt(opts.promptVersion);
  const custom = opts.instructions?.trim();
  const instructions = custom
    ? `${prompt.instructions}\n\nAdditional instructions from the user:\n${custom}`
    : prompt.instructions;
  const model = opts.model ?? opts.client.model;
  const tailTokens = opts.budgets.continuityTailTokens ?? CONTINUITY_TAIL_MAX_TOKENS;
  // L1: the request itself must fit the capacity: frozen prefix and requested output count.
  // The default output is subtracted too, so the whole safety headroom stays free for what a
  // provider counts beyond our estimate (content-block and tool-call metadata).
  const capacity = opts.budgets.capacity;
  const frozen = frozenPrefixTokens(opts.system, opts.tools, est);
  const allowance = summaryRequestAllowance(
    capacity,
    frozen,
    opts.maxOutputTokens ?? defaultSummaryOutputTokens(capacity),
  );
  const fit = (budget: number | null) => fitBudget(budget, allowance);
  const abstractMax = opts.abstractMaxOutputTokens ?? ABSTRACT_MAX_OUTPUT_TOKENS;
  const reinjectBudget = Math.max(
    0,
    opts.reinjectBudgetTokens ?? defaultReinjectBudget(opts.budgets.capacity),
  );

  const bandOptions = (budget: number | null) => ({
    budget,
    estimator: est,
    instructions,
    continuityTailTokens: tailTokens,
  });
  const fork = (band: SummaryBand, prepared: PreparedSummary): LocalFork => ({
    band,
    prepared,
    inputTokens: prepared.inputTokens,
  });

  /** One band re-bounded alone: the unbounded split (same cuts as L4), then L1–L3 on that band. */
  function prepareOneBand(history: readonly Message[], band: 'older' | 'newer', budget: number | null) {
    const split = prepareHierarchicalBands(history, bandOptions(null));
    const base = band === 'older' ? split.abstract : split.detail;
    if (base.fork.length > 0)
      return prepareLocalSummary(base.fork, {
        budget,
        estimator: est,
        instructions: base.instructions,
        allowance: BAND_ALLOWANCE[band],
        includeLeading: true,
      });
    if (budget !== null && base.instructionsTokens > budget)
      throw new BudgetError(BAND_ALLOWANCE[band], base.instructionsTokens, budget);
    return { ...base, budget };
  }

  // §14: summaries accepted without the full template in this pass, by band, and their texts.
  const warned = new Map<SummaryBand, SummaryWarning>();
  const acceptedTexts = new Set<string>();

  const rebuildOptions: RebuildOptions = {
    estimator: est,
    continuityTailTokens: tailTokens,
    capacity: opts.budgets.capacity,
    reserveOutput: opts.reserveOutput ?? 0,
    prefixTokens: opts.prefixTokens ?? 0,
  };

  return {
    compactable(history) {
      const { verbatimStart } = splitContinuityTail(history, tailTokens, est);
      return history.slice(0, verbatimStart).filter((m) => m.role !== 'system' && !isSummaryMessage(m))
        .length;
    },

    prepare(history, budget) {
      warned.clear();
      return fork(
        'flat',
        prepareLocalSummary(history, { budget: fit(budget), estimator: est, instructions }),
      );
    },

    prepareBands(history, budget) {
      warned.clear();
      const bands: HierarchicalBands = prepareHierarchicalBands(history, bandOptions(fit(budget)));
      return { older: fork('older', bands.abstract), newer: fork('newer', bands.detail) };
    },

    prepareBand(history, band, budget) {
      warned.delete(band);
      return fork(band, prepareOneBand(history, band, fit(budget)));
    },

    async request(f, band, signal): Promise<SummaryResponse> {
      const maxOutputTokens =
        band === 'older'
          ? Math.min(abstractMax, opts.maxOutputTokens ?? abstractMax)
          : (opts.maxOutputTokens ?? defaultSummaryOutputTokens(capacity));
      const send = (text: string) => {
        const total = f.inputTokens + measureInstructions(text, est) + frozen + (maxOutputTokens ?? 0);
        if (capacity !== null && total > capacity)
          throw new BudgetError(
            'summary request (input, frozen prefix and requested output)',
            total,
            capacity,
          );
        const request = toSummaryRequest(
          { ...f.prepared, instructions: text },
          {
            model,
            system: opts.system,
            tools: opts.tools,
            maxOutputTokens,
            requestFields: opts.requestFields,
          },
        );
        return opts.client.summarize(request, signal);
      };
      const attempt: SummaryAttempt = {
        provider: opts.client.provider,
        model,
        inputTokens: f.inputTokens,
        budget: f.prepared.budget,
        kind: CALL_KIND[band],
      };
      try {
        // The abstract band is one or two sentences by design: it has no template to repair.
        if (band === 'older') {
          const response = await send(f.prepared.instructions);
          requireSummaryText(response, attempt);
          return response;
        }
        const settled = await summarizeWithRepair(send, {
          instructions: f.prepared.instructions,
          sections: prompt.sections,
          estimator: est,
          signal,
        });
        requireSummaryText(settled.response, attempt);
        if (settled.missingSections !== null) {
          warned.set(band, summaryWarning(band, settled.missingSections));
          acceptedTexts.add(settled.response.text.trim());
        }
        return settled.response;
      } catch (e) {
        if (isAbort(e) || signal.aborted) throw e;
        throw summaryFailure(e, attempt);
      }
    },

    followsTemplate(text, band) {
      // The abstract band is one or two sentences by design (ABSTRACT_INSTRUCTIONS): no template.
      if (band === 'older') return text.trim() !== '';
      return acceptedTexts.has(text.trim()) || templateProblem(text, prompt.sections, est) === null;
    },

    warnings() {
      return [...warned.values()];
    },

    rebuild(history, summaries) {
      const rebuilt =
        summaries.length === 2
          ? rebuildHierarchicalHistory(
              prepareHierarchicalBands(history, bandOptions(null)),
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
        buildReinjection(history, { budgetTokens: room, estimator: est }),
      );
    },
  };
}
