import type { History, Message } from '../../src/messages/message.js';
import type { Estimator } from '../../src/estimate/estimator.js';

/**
 * Running token total of an append-only history. When the history handed in is the
 * one seen last time plus new messages at the end (checked in O(1) by the identity of the
 * last message seen), only the new messages are estimated, so a turn costs O(new
 * messages), not O(history). Anything else (a copy, a compaction) falls back to a full
 * sum, which is still cheap because the estimator caches per message. Only the estimator
 * benchmark uses it (to time a turn's estimate), so it lives in dev/, outside the package.
 */
export interface RunningTotal {
  total(history: History): number;
}

/** Creates a {@link RunningTotal} over an estimator. */
export function createRunningTotal(estimator: Estimator): RunningTotal {
  let seen = 0;
  let last: Message | undefined;
  let sum = 0;
  return {
    total(history) {
      const extends_ = seen > 0 && history.length >= seen && history[seen - 1] === last;
      if (!extends_) {
        seen = 0;
        sum = 0;
      }
      for (let i = seen; i < history.length; i++) sum += estimator.message(history[i]);
      seen = history.length;
      last = history[seen - 1];
      return sum;
    },
  };
}
