import { charsCounter } from '#src/estimate/counters.js';
import { createEstimator, type Estimator } from '#src/estimate/estimator.js';
import { msg, type Message } from '#src/messages/message.js';
import { resolveBudgets, type Limits } from '#src/projection/budgets.js';
import type { PolicyContext } from '#dev/replay/types.js';

/** A fast estimator (chars/4) so replay tests need no tokenizer. */
export function fastEstimator(): Estimator {
  return createEstimator({ counter: charsCounter });
}

/** Policy context for a window. */
export function contextFor(limits: Limits, estimator = fastEstimator()): PolicyContext {
  return { estimator, limits, budgets: resolveBudgets(limits) };
}

/** `n` lines of filler text of about `chars` characters each. */
export function filler(tag: string, lines: number, chars = 80): string {
  return Array.from({ length: lines }, (_, i) => `${tag} line ${i} `.padEnd(chars, 'x')).join('\n');
}

/**
 * A session of `batches` read batches on distinct files, each result `lines` lines long
 * (about 20 tokens a line with the chars estimator), then a final assistant answer.
 */
export function readSession(batches: number, lines = 40): Message[] {
  const out: Message[] = [msg.system('You are a coding agent.'), msg.user('Fix the parser.')];
  for (let b = 0; b < batches; b++) {
    const id = `call_${b}`;
    out.push(
      msg.assistant('', [{ id, name: 'read_file', arguments: JSON.stringify({ path: `src/file${b}.ts` }) }]),
    );
    out.push(msg.tool(id, filler(`file${b}`, lines), 'read_file'));
  }
  out.push(msg.assistant('Done.'));
  return out;
}
