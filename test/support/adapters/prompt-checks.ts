import type { Estimator } from '#src/estimate/estimator.js';
import { textOf, type Message } from '#src/messages/message.js';

/** What one prompt a model received looked like, in canonical messages. */
export interface PromptFacts {
  tokens: number;
  /** Every tool result answers a call made earlier in the same prompt, once. */
  protocolValid: boolean;
  statesGoal: boolean;
}

/**
 * Facts of one prompt as the model received it (system prompt included): its estimated size,
 * whether every tool result answers a call in the same prompt, and whether `goalLine` is in it.
 */
export function promptFacts(prompt: readonly Message[], estimator: Estimator, goalLine: string): PromptFacts {
  const calls = new Set<string>();
  const answered = new Set<string>();
  let protocolValid = true;
  let statesGoal = false;
  for (const m of prompt) {
    if (textOf(m.content).includes(goalLine)) statesGoal = true;
    for (const c of m.toolCalls ?? []) calls.add(c.id);
    if (m.role === 'tool') {
      const id = m.toolCallId ?? '';
      if (!calls.has(id) || answered.has(id)) protocolValid = false;
      answered.add(id);
    }
  }
  return { tokens: estimator.history(prompt), protocolValid, statesGoal };
}
