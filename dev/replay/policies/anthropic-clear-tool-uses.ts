import type { Message } from '../../../src/messages/message.js';
import type { RetentionPolicy } from '../types.js';
import { replaceResults, toolResultIndices } from './replace-results.js';

/** `clear_tool_uses_20250919` defaults: trigger at 100,000 input tokens … */
export const ANTHROPIC_CLEAR_TRIGGER = 100_000;
/** … keeping the 3 most recent tool uses. */
export const ANTHROPIC_CLEAR_KEEP = 3;
/** Placeholder text of a cleared result. */
export const ANTHROPIC_PLACEHOLDER = '[cleared]';

const memo = new WeakMap<Message, Message>();

/**
 * Anthropic context editing `clear_tool_uses` with its defaults: once the
 * input (history + prompt prefix) reaches 100,000 tokens, every tool result except the 3
 * most recent is replaced by a placeholder; inputs are kept (`clear_tool_inputs` off),
 * no `clear_at_least`. Written from the documented constants (the server code is closed).
 */
export const anthropicClearToolUsesPolicy: RetentionPolicy = {
  name: 'anthropic-clear',
  description:
    'Anthropic clear_tool_uses defaults: at ≥ 100,000 input tokens keep the 3 newest tool results.',
  source: 'reimplemented',
  project(history, { estimator, limits }) {
    const input = estimator.history(history) + Math.max(0, limits.prefixTokens ?? 0);
    if (input < ANTHROPIC_CLEAR_TRIGGER) return Promise.resolve(history);
    const results = toolResultIndices(history);
    const old = results.slice(0, Math.max(0, results.length - ANTHROPIC_CLEAR_KEEP));
    return Promise.resolve(
      replaceResults(history, old, memo, (m) => ({ ...m, content: ANTHROPIC_PLACEHOLDER })),
    );
  },
};
