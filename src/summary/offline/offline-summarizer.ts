import { createEstimator, type Estimator } from '../../estimate/estimator.js';
import type { SummaryClient, SummaryRequest, SummaryResponse } from '../../providers/types.js';
import { loadSummaryPrompt } from '../prompt.js';
import { extractSessionFacts } from './extract.js';
import { ABSTRACT_INSTRUCTIONS } from '../hierarchical.js';
import { renderAbstract } from './render-abstract.js';
import { fullTemplateFloorTokens, renderSummary, SECTION_KEYS } from './render.js';
import { InternalError, CancelledError } from '../../core/errors.js';

/** Provider name the offline summarizer reports. */
export const OFFLINE_PROVIDER = 'offline';
/** Model name the offline summarizer reports. */
export const OFFLINE_MODEL = 'compactor-offline-v1';

/** Output budget when the request sets none (VT Code's summary cap). */
export const OFFLINE_DEFAULT_MAX_OUTPUT_TOKENS = 4_096;

/** Options of {@link createOfflineSummarizer}. */
export interface OfflineSummarizerOptions {
  /** Estimator for output bounding (default: a fresh o200k estimator). */
  estimator?: Estimator;
  /** Output budget when a request has no `maxOutputTokens` (default 4,096). */
  maxOutputTokens?: number;
  /** Prompt version whose headings are used (default summary-v1). */
  promptVersion?: string;
}

/**
 * The output cap: the requested one, and below the input's size (a summary must be
 * smaller than what it replaces) once the input is at least twice the template's floor.
 * A smaller input could only get headings; it gets the full account, and validation
 * rejects it as larger than its input.
 */
function outputCap(requested: number, inputTokens: number, floor: number): number {
  return inputTokens - 1 >= 2 * floor ? Math.min(requested, inputTokens - 1) : requested;
}

/**
 * The embedded offline summarizer, a {@link SummaryClient} that needs no network and
 * is deterministic (same request → byte-identical summary). It reads the fork and writes
 * the summary template's sections: goal and user restrictions, checks by status, every command with its
 * exit code (repeats folded), files read and modified, de-duplicated errors, pending
 * approvals and session ids, and the plan. Assistant text is quoted only as an unverified
 * claim. The output never exceeds `maxOutputTokens`: whole lines are left out by priority
 * and each section states how many it omitted, so it always finishes with `stop` — except
 * when the headings alone do not fit, where it returns the cut text with `length` (which
 * summary validation then rejects). A previous Compactor summary inside the fork is carried
 * forward section by section rather than summarized again. The hierarchical abstract band
 * (its request carries `ABSTRACT_INSTRUCTIONS`), or any output cap below the full template's
 * floor, gets the condensed rendering of `render-abstract.ts` (goal, outcomes, failing
 * checks, files modified), which fits VT Code's 150-token abstract cap.
 */
export function createOfflineSummarizer(options: OfflineSummarizerOptions = {}): SummaryClient {
  const estimator = options.estimator ?? createEstimator();
  const prompt = loadSummaryPrompt(options.promptVersion);
  if (prompt.sections.length !== SECTION_KEYS.length)
    throw new InternalError(
      `summary prompt ${prompt.version} has ${prompt.sections.length} sections; the offline summarizer expects ${SECTION_KEYS.length}`,
    );
  // Worked out at the first summary: most sessions never summarize, and every session makes one.
  let floorTokens: number | undefined;
  return {
    provider: OFFLINE_PROVIDER,
    model: OFFLINE_MODEL,
    summarize(request: SummaryRequest, signal?: AbortSignal): Promise<SummaryResponse> {
      if (signal?.aborted) return Promise.reject(signal.reason ?? new CancelledError('aborted'));
      const facts = extractSessionFacts(request.messages);
      const inputTokens = estimator.history(request.messages);
      const floor = (floorTokens ??= fullTemplateFloorTokens(prompt.sections, estimator));
      const render = {
        estimator,
        maxOutputTokens: outputCap(
          request.maxOutputTokens ?? options.maxOutputTokens ?? OFFLINE_DEFAULT_MAX_OUTPUT_TOKENS,
          inputTokens,
          floor,
        ),
        headings: prompt.sections,
      };
      // The abstract band (or a cap too small for the full template) gets the condensed form.
      const abstract =
        (request.instructions ?? '').trim().startsWith(ABSTRACT_INSTRUCTIONS) ||
        render.maxOutputTokens < floor;
      const rendered = abstract ? renderAbstract(facts, render) : renderSummary(facts, render);
      return Promise.resolve({
        text: rendered.text,
        finishReason: rendered.finishReason,
        usage: {
          inputTokens,
          outputTokens: estimator.text(rendered.text),
        },
      });
    },
  };
}
