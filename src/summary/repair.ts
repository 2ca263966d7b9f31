import type { SummaryBand } from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import type { SummaryResponse } from '../providers/types.js';
import { validateSummary } from './validate.js';

/** A summary accepted although it misses template sections (after one repair request). */
export interface SummaryWarning {
  band: SummaryBand;
  /** Template headings the accepted summary lacks (or holds only placeholders under). */
  missingSections: string[];
  /** One line for the report. */
  message: string;
}

/** What {@link summarizeWithRepair} settled on. */
export interface RepairedSummary {
  response: SummaryResponse;
  /** Set when the summary is accepted without the full template. */
  missingSections: string[] | null;
}

/** Options of {@link summarizeWithRepair}. */
export interface RepairOptions {
  /** The summary instructions of the first request. */
  instructions: string;
  /** Template headings the summary must carry. */
  sections: readonly string[];
  estimator: Estimator;
  signal: AbortSignal;
}

/** The instructions of the repair request: the original ones, then the validation error quoted. */
export function repairInstructions(
  instructions: string,
  problem: string,
  sections: readonly string[],
): string {
  return (
    `${instructions}\n\nYour previous summary was rejected: "${problem}". ` +
    `Write the whole summary again with every one of these headings, in this order: ` +
    `${sections.map((s) => `## ${s}`).join(', ')}.`
  );
}

/** The template check alone: null when the text follows the template, else the error and missing headings. */
export function templateProblem(
  text: string,
  sections: readonly string[],
  estimator: Estimator,
): { message: string; missing: string[] } | null {
  const check = validateSummary(
    { text, finishReason: 'stop' },
    { inputTokens: Number.POSITIVE_INFINITY, estimator, requiredSections: sections },
  );
  if (check.ok || check.check !== 'template') return null;
  return { message: check.message, missing: check.missingSections ?? [...sections] };
}

const isAbort = (e: unknown, signal: AbortSignal): boolean =>
  signal.aborted || (e instanceof Error && e.name === 'AbortError');

/**
 * Template repair, as a robust client does it: a summary that misses template headings gets ONE repair
 * request quoting the validation error. A repaired summary that follows the template wins;
 * otherwise the non-empty, complete answer (the repair's, else the first) is accepted with
 * the missing sections listed. Empty and truncated answers are never accepted here: a cut-off
 * first answer is returned as is (the caller rejects it), and a failed repair keeps the first.
 */
export async function summarizeWithRepair(
  send: (instructions: string) => Promise<SummaryResponse>,
  opts: RepairOptions,
): Promise<RepairedSummary> {
  const first = await send(opts.instructions);
  if (first.finishReason === 'length') return { response: first, missingSections: null };
  const problem = templateProblem(first.text, opts.sections, opts.estimator);
  if (problem === null) return { response: first, missingSections: null };
  let second: SummaryResponse | undefined;
  try {
    second = await send(repairInstructions(opts.instructions, problem.message, opts.sections));
  } catch (e) {
    if (isAbort(e, opts.signal)) throw e;
  }
  if (second && second.finishReason !== 'length' && second.text.trim() !== '') {
    const left = templateProblem(second.text, opts.sections, opts.estimator);
    return { response: second, missingSections: left === null ? null : left.missing };
  }
  return { response: first, missingSections: problem.missing };
}

/** The report line of an accepted summary that lacks sections. */
export function summaryWarning(band: SummaryBand, missing: string[]): SummaryWarning {
  return {
    band,
    missingSections: missing,
    message: `summary accepted without the template sections: ${missing.join(', ')}`,
  };
}
