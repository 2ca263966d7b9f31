import type { Estimator } from '../estimate/estimator.js';
import { textOf, type Message } from '../messages/message.js';
import type { RequestFields } from '../providers/request-fields.js';
import type { SummaryRequest, ToolSchema } from '../providers/types.js';
import { normalizeHistory } from '../projection/normalize.js';
import { boundHistoryForSummary, type BoundMode } from './bound.js';
import { instructionsTokens as measureInstructions } from './preview.js';
import { pruneOversizedToolOutputs } from './prune.js';

/** Options of {@link prepareLocalSummary}. */
export interface PrepareOptions {
  /**
   * Summary input allowance (`resolveBudgets(...).summaryInputBudget`):
   * window minus safety headroom, frozen prefix and explicit output limit; `null` when the
   * window is unknown (the first fork is then verbatim, though still pruned).
   */
  budget: number | null;
  estimator: Estimator;
  /** The summary instructions (the summary prompt), sent as the fork's final user message. */
  instructions: string;
  /** Tool results above this many tokens become previews (default 4,096). */
  pruneMaxTokens?: number;
  /** Allowance name for budget errors (default "summary input budget"). */
  allowance?: string;
  /** Let messages before the first user message be selected (bands). */
  includeLeading?: boolean;
}

/** A prepared, validated fork: everything a summary call needs, measured before dispatch. */
export interface PreparedSummary {
  /** The bounded, protocol-valid messages to summarize. */
  fork: Message[];
  /** Estimated tokens of `fork` (instructions excluded): the `input_tokens` a failure reports. */
  inputTokens: number;
  /** Estimated tokens of the instructions message. */
  instructionsTokens: number;
  /** The allowance this fork was bounded to (`null` = unknown window). */
  budget: number | null;
  instructions: string;
  mode: BoundMode;
  omittedMessages: number;
}

/**
 * Repairs call/result pairing, prunes oversized tool results, then bounds the fork to the allowance.
 * Throws a `BudgetError` naming the allowance when no valid fork fits — before any
 * provider call. Pure: the input history is not modified.
 */
export function prepareLocalSummary(history: readonly Message[], options: PrepareOptions): PreparedSummary {
  const est = options.estimator;
  // Pairing repaired first: a message sent while a tool ran splits a call from its result, and
  // the bound stops at such an incomplete group, leaving everything older out of the summary.
  const paired = normalizeHistory(history);
  const pruned = pruneOversizedToolOutputs(paired, est, { maxTokens: options.pruneMaxTokens });
  const instructionsTokens = measureInstructions(options.instructions, est);
  const bounded = boundHistoryForSummary(pruned, {
    budget: options.budget,
    instructionsTokens,
    estimator: est,
    allowance: options.allowance,
    includeLeading: options.includeLeading,
  });
  return {
    fork: bounded.messages,
    inputTokens: bounded.inputTokens,
    instructionsTokens,
    budget: options.budget,
    instructions: options.instructions,
    mode: bounded.mode,
    omittedMessages: bounded.omittedMessages,
  };
}

/** Route facts a summary request carries (parent context only when provider/model match). */
export interface SummaryRequestContext {
  model: string;
  system?: string;
  tools?: ToolSchema[];
  maxOutputTokens?: number;
  requestFields?: RequestFields;
}

/**
 * The system prompt of a summary request and the transcript after it: the fork's leading
 * system messages move into the wire's system slot (Chat `system`, Anthropic `system`,
 * Responses `instructions`), and one the parent prompt already carries is not sent twice.
 * Only messages already in the fork move, so the request does not grow.
 */
export function splitSystemPrompt(
  fork: readonly Message[],
  parentSystem: string | undefined,
): { system?: string; messages: Message[] } {
  let lead = 0;
  while (lead < fork.length && fork[lead].role === 'system') lead++;
  const parts = parentSystem !== undefined && parentSystem.trim() !== '' ? [parentSystem] : [];
  for (const m of fork.slice(0, lead)) {
    const text = textOf(m.content);
    if (text.trim() !== '' && !parts.some((p) => p.includes(text))) parts.push(text);
  }
  const messages = fork.slice(lead);
  return parts.length > 0 ? { system: parts.join('\n\n'), messages } : { messages };
}

/** The {@link SummaryRequest} for a prepared fork. */
export function toSummaryRequest(prepared: PreparedSummary, context: SummaryRequestContext): SummaryRequest {
  const split = splitSystemPrompt(prepared.fork, context.system);
  const request: SummaryRequest = {
    model: context.model,
    messages: split.messages,
    instructions: prepared.instructions,
  };
  if (split.system !== undefined) request.system = split.system;
  if (context.tools !== undefined && context.tools.length > 0) request.tools = context.tools;
  if (context.maxOutputTokens !== undefined) request.maxOutputTokens = context.maxOutputTokens;
  if (context.requestFields !== undefined) request.requestFields = context.requestFields;
  return request;
}
