import type { SummaryBand } from '../../../machines/index.js';
import { BudgetError } from '../../core/errors.js';
import type { SummaryResponse } from '../../providers/types.js';
import { summaryFailure, requireSummaryText, type SummaryAttempt } from '../../summary/diagnostics.js';
import { toSummaryRequest } from '../../summary/prepare.js';
import { instructionsTokens as measureInstructions } from '../../summary/preview.js';
import {
  repairInstructions,
  summaryWarning,
  templateProblem,
  type SummaryWarning,
} from '../../summary/repair.js';
import { defaultSummaryOutputTokens } from '../../summary/request-fit.js';
import type { LocalFork } from './local-summarizer-options.js';
import type { LocalSummarySettings } from './local-summary-settings.js';

const CALL_KIND = { flat: 'flat', older: 'abstract', newer: 'detail' } as const;

function isAbort(e: unknown): boolean {
  return e instanceof Error && e.name === 'AbortError';
}

/** The abstract band's answer is capped; the others get the configured or default reserve. */
function outputTokens(s: LocalSummarySettings, band: SummaryBand): number | undefined {
  return band === 'older'
    ? Math.min(s.abstractMax, s.opts.summaryOutputLimit ?? s.abstractMax)
    : (s.opts.summaryOutputLimit ?? defaultSummaryOutputTokens(s.capacity));
}

/**
 * Sends the fork with the given instructions (the first request or a repair request). Checked
 * against the capacity before it leaves, so no request over the window is ever sent.
 */
function sender(
  s: LocalSummarySettings,
  f: LocalFork,
  maxOutputTokens: number | undefined,
  signal: AbortSignal,
) {
  return (text: string): Promise<SummaryResponse> => {
    const total = f.inputTokens + measureInstructions(text, s.est) + s.frozen + (maxOutputTokens ?? 0);
    if (s.capacity !== null && total > s.capacity)
      throw new BudgetError('summary request (input, frozen prefix and requested output)', total, s.capacity);
    const request = toSummaryRequest(
      { ...f.prepared, instructions: text },
      {
        model: s.model,
        system: s.opts.system,
        tools: s.opts.tools,
        maxOutputTokens,
        requestFields: s.opts.requestFields,
      },
    );
    return s.opts.client.summarize(f.prefix ? { ...request, prefix: true } : request, signal);
  };
}

/**
 * One summary call for a fork (agent's envelope if the route matches, explicit output reserve).
 * With `previous` it is the repair request for that summary: the instructions again, quoting
 * the template sections it missed. Failures carry provider, model, input tokens and budget; an
 * abort stays an abort.
 */
export async function requestLocalSummary(
  s: LocalSummarySettings,
  f: LocalFork,
  band: SummaryBand,
  signal: AbortSignal,
  previous?: string,
): Promise<SummaryResponse> {
  const send = sender(s, f, f.prefix ? f.prefix.maxOutputTokens : outputTokens(s, band), signal);
  const attempt: SummaryAttempt = {
    provider: s.opts.client.provider,
    model: s.model,
    inputTokens: f.inputTokens,
    budget: f.prepared.budget,
    kind: CALL_KIND[band],
  };
  const problem = previous === undefined ? null : templateProblem(previous, s.prompt.sections, s.est);
  const instructions =
    problem === null
      ? f.prepared.instructions
      : repairInstructions(f.prepared.instructions, problem.message, s.prompt.sections);
  try {
    const response = await send(instructions);
    requireSummaryText(response, attempt);
    return response;
  } catch (e) {
    if (isAbort(e) || signal.aborted) throw e;
    throw summaryFailure(e, attempt);
  }
}

/**
 * The summaries of the current pass accepted without the full template, by band. Kept per
 * summarizer so the report can name them; recorded when the history is rebuilt from the
 * summaries the machine settled on.
 */
export class SummaryPassWarnings {
  private readonly warned = new Map<SummaryBand, SummaryWarning>();

  /** A new pass (both bands prepared afresh) starts without warnings. */
  clear(): void {
    this.warned.clear();
  }

  accept(band: SummaryBand, missingSections: string[]): void {
    this.warned.set(band, summaryWarning(band, missingSections));
  }

  list(): SummaryWarning[] {
    return [...this.warned.values()];
  }
}
