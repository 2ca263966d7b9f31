import type { SummaryBand } from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import { validateSummary } from './validate.js';

/** A summary accepted although it misses template sections (after one repair request). */
export interface SummaryWarning {
  band: SummaryBand;
  /** Template headings the accepted summary lacks (or holds only placeholders under). */
  missingSections: string[];
  /** One line for the report. */
  message: string;
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

/** The report line of an accepted summary that lacks sections. */
export function summaryWarning(band: SummaryBand, missing: string[]): SummaryWarning {
  return {
    band,
    missingSections: missing,
    message: `summary accepted without the template sections: ${missing.join(', ')}`,
  };
}
