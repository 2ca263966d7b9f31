import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';

// The last history each estimator counted, message by message. A session's next request is
// its last one plus a few messages, so counting resumes after the shared prefix with one
// pointer comparison per message instead of a cache lookup, which slows as the cache outgrows
// the CPU's caches (at 50,000 messages the lookups were half of a warm turn). Like the
// estimator's own cache, this treats messages as immutable values.
const lastCounted = new WeakMap<Estimator, { messages: readonly Message[]; tokens: readonly number[] }>();

/** Tokens of each message of `messages`, as `est.message` counts them. */
export function tokensPerMessage(messages: readonly Message[], est: Estimator): readonly number[] {
  const last = lastCounted.get(est);
  const tokens: number[] = [];
  if (last) {
    const shared = Math.min(last.messages.length, messages.length);
    while (tokens.length < shared && last.messages[tokens.length] === messages[tokens.length])
      tokens.push(last.tokens[tokens.length]);
  }
  for (let i = tokens.length; i < messages.length; i++) tokens.push(est.message(messages[i]));
  // A copy: the caller may grow or edit its array in place before the next request.
  lastCounted.set(est, { messages: messages.slice(), tokens });
  return tokens;
}
