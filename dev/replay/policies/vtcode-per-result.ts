import type { Message } from '../../../src/messages/message.js';
import { stubResult } from '../../../src/projection/stubs.js';
import type { RetentionPolicy } from '../types.js';
import { replaceResults, toolResultIndices } from './replace-results.js';

/** VT Code's earlier rule: fixed trigger of 40,000 history tokens … */
export const VTCODE_EARLIER_TRIGGER = 40_000;
/** … and the newest 2 results kept, counted per result (no batch expansion, no evidence window). */
export const VTCODE_EARLIER_KEEP = 2;

const memo = new WeakMap<Message, Message>();

/**
 * VT Code's per-result clearing before complete-batch retention (the pilot's
 * predecessor): once history reaches 40,000 tokens, every result except the newest 2 is
 * replaced by the same JSON stub Compactor uses, when the stub is smaller.
 */
export const vtcodePerResultPolicy: RetentionPolicy = {
  name: 'vtcode-per-result',
  description:
    'VT Code earlier per-result rule: at ≥ 40,000 history tokens keep the newest 2 results, stub the rest.',
  source: 'reimplemented',
  project(history, { estimator }) {
    if (estimator.history(history) < VTCODE_EARLIER_TRIGGER) return Promise.resolve(history);
    const results = toolResultIndices(history);
    const old = results.slice(0, Math.max(0, results.length - VTCODE_EARLIER_KEEP));
    const stub = (m: Message): Message => stubResult(m, m.toolName ?? 'tool');
    const shrinking = old.filter((i) => estimator.message(stub(history[i])) < estimator.message(history[i]));
    return Promise.resolve(replaceResults(history, shrinking, memo, stub));
  },
};
