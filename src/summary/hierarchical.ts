import type { Estimator } from '../estimate/estimator.js';
import { textOf, type Message } from '../messages/message.js';
import { splitContinuityTail } from './continuity.js';
import { prepareLocalSummary, type PreparedSummary } from './prepare.js';
import { instructionsTokens as measureInstructions } from './preview.js';
import { BudgetError } from '../core/errors.js';
import { assembleRebuilt, summaryMessage, type RebuildOptions, type RebuiltHistory } from './rebuild.js';
import { ABSTRACT_HEADER, DETAIL_HEADER } from './summary-message.js';

/** VT Code's abstract-band instructions and output cap. */
export const ABSTRACT_INSTRUCTIONS =
  'Summarize the overall goal of this earlier part of the session and its major progress in 1-2 sentences. ' +
  'Only user messages and tool results are evidence; model claims are not.';
export const ABSTRACT_MAX_OUTPUT_TOKENS = 150;

/** Options of {@link prepareHierarchicalBands}. */
export interface BandOptions {
  /** Summary input allowance for EACH band call (`null` = unknown window). */
  budget: number | null;
  estimator: Estimator;
  /** The summary instructions for the detail band (the summary prompt). */
  instructions: string;
  /** Continuity tail target (`resolveBudgets(...).continuityTailTokens`). */
  continuityTailTokens: number;
  abstractInstructions?: string;
  pruneMaxTokens?: number;
}

/** Both prepared bands, what retention may keep, and the continuity tail. */
export interface HierarchicalBands {
  abstract: PreparedSummary & { maxOutputTokens: number };
  detail: PreparedSummary;
  /** The history before the tail's first group: rebuild keeps some of it through retention (no duplicates with the tail). */
  retainFrom: Message[];
  tail: Message[];
}

/** Moves a cut forward past tool results so a band never separates a batch from them. */
function snap(history: readonly Message[], cut: number): number {
  while (cut < history.length && history[cut].role === 'tool') cut++;
  return cut;
}

/** A band with no messages still gets a (header-only) call, as in VT Code. */
function prepareBand(
  band: readonly Message[],
  options: BandOptions,
  instructions: string,
  allowance: string,
) {
  if (band.length > 0)
    return prepareLocalSummary(band, {
      budget: options.budget,
      estimator: options.estimator,
      instructions,
      pruneMaxTokens: options.pruneMaxTokens,
      allowance,
      includeLeading: true,
    });
  const tokens = measureInstructions(instructions, options.estimator);
  if (options.budget !== null && tokens > options.budget)
    throw new BudgetError(allowance, tokens, options.budget);
  return {
    fork: [],
    inputTokens: 0,
    instructionsTokens: tokens,
    budget: options.budget,
    instructions,
    mode: 'verbatim' as const,
    omittedMessages: 0,
  };
}

/**
 * Splits off the continuity tail, then cuts everything the rebuilt history will not keep
 * verbatim — up to the tail's first verbatim batch, so the middle of a long newest group is
 * summarized too — into two bands: the oldest third of those messages is the abstract
 * (older) band, the rest the detail (newer) band. The cut is snapped to a batch boundary, so
 * a call never lands in another band than its results, even inside a single long group.
 * Both bands are prepared AND validated before either call is spent: an impossible band
 * throws {@link BudgetError} naming that band's allowance, so a failure costs zero calls.
 */
export function prepareHierarchicalBands(
  history: readonly Message[],
  options: BandOptions,
): HierarchicalBands {
  const split = splitContinuityTail(history, options.continuityTailTokens, options.estimator);
  const summarized = history.slice(0, split.verbatimStart);
  const cut = snap(summarized, Math.floor(summarized.length / 3));
  const abstract = prepareBand(
    summarized.slice(0, cut),
    options,
    options.abstractInstructions ?? ABSTRACT_INSTRUCTIONS,
    'abstract band input budget',
  );
  const detail = prepareBand(
    summarized.slice(cut),
    options,
    options.instructions,
    'detail band input budget',
  );
  return {
    abstract: { ...abstract, maxOutputTokens: ABSTRACT_MAX_OUTPUT_TOKENS },
    detail,
    retainFrom: split.before,
    tail: split.tail,
  };
}

/**
 * Rebuilds history from two band summaries: the abstract and detail messages, messages
 * retained from before the tail, then the tail; output-bounded like {@link rebuildHistory}.
 */
export function rebuildHierarchicalHistory(
  bands: HierarchicalBands,
  abstractText: string,
  detailText: string,
  options: RebuildOptions,
): RebuiltHistory {
  const lead = [summaryMessage(detailText, DETAIL_HEADER)];
  if (abstractText.trim() !== '') lead.unshift(summaryMessage(abstractText, ABSTRACT_HEADER));
  return assembleRebuilt(lead, bands.retainFrom, bands.tail, options);
}

/** How many characters of a message the band instructions quote to name where the newer part starts. */
const QUOTE_CHARS = 80;

/** The message the newer band starts at, named so a model reading the whole conversation finds it. */
function bandStart(detail: readonly Message[]): string | null {
  for (const m of detail) {
    const text = textOf(m.content).replace(/\s+/g, ' ').trim();
    if (text !== '' && m.role !== 'tool')
      return `the ${m.role} message that begins "${text.slice(0, QUOTE_CHARS)}"`;
    const call = m.toolCalls?.[0];
    if (call) return `the ${call.name} call with the arguments ${call.arguments.slice(0, QUOTE_CHARS)}`;
  }
  return null;
}

/**
 * The instructions of both bands when each is asked over the whole request last sent (so the
 * provider's prompt cache serves it) instead of over its own slice: each names the part of the
 * conversation it covers by quoting where the newer part starts. Null when the newer band has
 * no message to name.
 */
export function wholeRequestBandInstructions(
  bands: Pick<HierarchicalBands, 'detail'>,
  instructions: string,
  abstractInstructions: string = ABSTRACT_INSTRUCTIONS,
): { older: string; newer: string } | null {
  const start = bandStart(bands.detail.fork);
  if (start === null) return null;
  return {
    older: `The earlier part of this session is everything before ${start}. ${abstractInstructions}`,
    newer:
      `${instructions}\n\nSummarize only the part of the session from ${start} on, to the end; ` +
      'the part before it is summarized separately.',
  };
}
