import type { Estimator } from '../estimate/estimator.js';
import type { SummaryResponse } from '../providers/types.js';
import { summarySections } from './prompt.js';

/** Which summary check rejected a summary. */
export type SummaryCheck = 'empty' | 'template' | 'truncated' | 'larger-than-input';

/** Result of {@link validateSummary}. */
export type SummaryValidation =
  { ok: true } | { ok: false; check: SummaryCheck; message: string; missingSections?: string[] };

/** Options of {@link validateSummary}. */
export interface ValidateOptions {
  /** Estimated tokens of the summarized fork (the summary must be smaller). */
  inputTokens: number;
  estimator: Estimator;
  /** Headings that must appear (default: the prompt template's sections). */
  requiredSections?: readonly string[];
}

// Bodies that say nothing: a section holding only these is a template placeholder.
const PLACEHOLDER =
  /^(?:[-*•]\s*)?(?:\(?(?:none|n\/a|na|nothing|empty|not applicable|no|tbd|unknown)\)?\.?|-+)?$/i;

/** Normalizes a possible heading line: `## Goal`, `**Goal:**`, `Goal:` → `goal`. */
function headingKey(line: string): string {
  return line
    .trim()
    .replace(/^#{1,6}\s*/, '')
    .replace(/^\*\*|\*\*$/g, '')
    .replace(/:\**$/, '')
    .replace(/\*\*$/, '')
    .trim()
    .toLowerCase();
}

/** `**Goal:** text` or `Goal: text` → the heading key and the inline remainder. */
function inlineHeading(line: string): { key: string; rest: string } | undefined {
  const m = /^\s*(?:#{1,6}\s*)?\**([^:*\n]{1,80}?)\**\s*:\**\s*(.*)$/.exec(line);
  return m ? { key: m[1].trim().toLowerCase(), rest: m[2].trim() } : undefined;
}

/**
 * Rejects a summary that is empty, cut off by the output limit, missing the template
 * (a required section absent, or every section only a placeholder such as "(none)"), or
 * not smaller than its input. The caller keeps history untouched on rejection. Checks run
 * in that order; the first failure is reported.
 */
export function validateSummary(summary: SummaryResponse, options: ValidateOptions): SummaryValidation {
  const text = summary.text.trim();
  if (text === '') return { ok: false, check: 'empty', message: 'provider returned an empty summary' };
  if (summary.finishReason === 'length')
    return {
      ok: false,
      check: 'truncated',
      message: 'summary was cut off by the output limit (finish reason "length")',
    };
  const required = options.requiredSections ?? summarySections();
  const lines = text.split('\n');
  const keys = lines.map(headingKey);
  const inline = lines.map(inlineHeading);
  const positions = required.map((s) =>
    keys.findIndex((k, i) => k === s.toLowerCase() || inline[i]?.key === s.toLowerCase()),
  );
  const missing = required.filter((_, i) => positions[i] < 0);
  if (missing.length > 0)
    return {
      ok: false,
      check: 'template',
      message: `summary is missing required sections: ${missing.join(', ')}`,
      missingSections: missing,
    };
  const starts = new Set(positions);
  const substantive = positions.some((p) => {
    if (inline[p] && !PLACEHOLDER.test(inline[p]!.rest)) return true;
    for (let i = p + 1; i < lines.length && !starts.has(i); i++)
      if (!PLACEHOLDER.test(lines[i].trim())) return true;
    return false;
  });
  if (required.length > 0 && !substantive)
    return {
      ok: false,
      check: 'template',
      message: 'summary has only empty template sections',
      missingSections: [...required],
    };
  const tokens = options.estimator.text(text);
  if (tokens >= options.inputTokens)
    return {
      ok: false,
      check: 'larger-than-input',
      message: `summary (${tokens} tokens) is not smaller than its input (${options.inputTokens} tokens)`,
    };
  return { ok: true };
}
