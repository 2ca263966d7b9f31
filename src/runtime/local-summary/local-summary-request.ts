import type { SummaryBand } from '../../../machines/index.js';
import { BudgetError } from '../../core/errors.js';
import type { SummaryResponse } from '../../providers/types.js';
import { summaryFailure, requireSummaryText, type SummaryAttempt } from '../../summary/diagnostics.js';
import { toSummaryRequest } from '../../summary/prepare.js';
import { instructionsTokens as measureInstructions } from '../../summary/preview.js';
import { summarizeWithRepair, summaryWarning, type SummaryWarning } from '../../summary/repair.js';
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
    return s.opts.client.summarize(request, signal);
  };
}

/**
 * One summary call for a fork (agent's envelope if the route matches, explicit output reserve). A
 * detail or flat summary missing template sections gets one repair request and is then accepted
 * with a warning. Failures carry provider, model, input tokens and budget; an abort stays an abort.
 */
export async function requestLocalSummary(
  s: LocalSummarySettings,
  warnings: SummaryPassWarnings,
  f: LocalFork,
  band: SummaryBand,
  signal: AbortSignal,
): Promise<SummaryResponse> {
  const send = sender(s, f, outputTokens(s, band), signal);
  const attempt: SummaryAttempt = {
    provider: s.opts.client.provider,
    model: s.model,
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
    // Every request after the first is a repair request, counted even when it fails.
    let sent = 0;
    const counted = (text: string) => {
      if (sent > 0) warnings.countRepairs(1);
      sent++;
      return send(text);
    };
    const settled = await summarizeWithRepair(counted, {
      instructions: f.prepared.instructions,
      sections: s.prompt.sections,
      estimator: s.est,
      signal,
    });
    requireSummaryText(settled.response, attempt);
    if (settled.missingSections !== null)
      warnings.accept(band, settled.missingSections, settled.response.text);
    return settled.response;
  } catch (e) {
    if (isAbort(e) || signal.aborted) throw e;
    throw summaryFailure(e, attempt);
  }
}

/**
 * The summaries of the current pass accepted without the full template, by band, and
 * their texts. Kept per summarizer so the report can name them, and so a summary accepted
 * after a repair request still counts as following the template.
 */
export class SummaryPassWarnings {
  private readonly warned = new Map<SummaryBand, SummaryWarning>();
  private readonly acceptedTexts = new Set<string>();
  private repairs = 0;

  /** A new pass (both bands prepared afresh) starts without warnings or repair requests. */
  clear(): void {
    this.warned.clear();
    this.repairs = 0;
  }

  /**
   * Counts repair requests sent in this pass. The machines count one call per summary, so
   * these are the provider requests they do not see; a retried band keeps its count, since
   * the requests were made.
   */
  countRepairs(n: number): void {
    this.repairs += n;
  }

  repairRequests(): number {
    return this.repairs;
  }

  /** A band re-bounded for a retry drops that band's warning. */
  forget(band: SummaryBand): void {
    this.warned.delete(band);
  }

  accept(band: SummaryBand, missingSections: string[], text: string): void {
    this.warned.set(band, summaryWarning(band, missingSections));
    this.acceptedTexts.add(text.trim());
  }

  accepted(text: string): boolean {
    return this.acceptedTexts.has(text.trim());
  }

  list(): SummaryWarning[] {
    return [...this.warned.values()];
  }
}
