import type { Message } from '../../../src/messages/message.js';
import { isSummaryMessage } from '../../../src/summary/rebuild.js';
import type { RetentionPolicy } from '../types.js';
import { replaceResults } from './replace-results.js';

/** opencode v1 `PRUNE_PROTECT`: the newest 40,000 tokens of tool output are never pruned. */
export const OPENCODE_PRUNE_PROTECT = 40_000;
/** opencode v1 `PRUNE_MINIMUM`: prune only when at least 20,000 tokens would be freed. */
export const OPENCODE_PRUNE_MINIMUM = 20_000;
/** Placeholder the model sees for a pruned output. */
export const OPENCODE_PLACEHOLDER = '[Old tool result content cleared]';
/** The two most recent user turns are skipped entirely. */
export const OPENCODE_SKIPPED_USER_TURNS = 2;

const memo = new WeakMap<Message, Message>();

/**
 * opencode-style pruning (written from its constants): walk backwards,
 * skipping everything in the two most recent user turns and stopping at a previous
 * summary; accumulate tool-output tokens; outputs beyond the first 40,000 are prunable;
 * prune them all only when together they reach 20,000 tokens. Note: an agent session
 * with a single user message never leaves its latest user turn, so nothing is pruned —
 * that is opencode's behaviour, not a replay artefact.
 */
export const opencodePrunePolicy: RetentionPolicy = {
  name: 'opencode-prune',
  description:
    'opencode prune: skip the 2 newest user turns, protect the newest 40,000 tool tokens, prune older only if ≥ 20,000 freed.',
  source: 'reimplemented',
  project(history, { estimator }) {
    let userTurns = 0;
    let seen = 0;
    let freed = 0;
    const prune: number[] = [];
    for (let i = history.length - 1; i >= 0; i--) {
      const m = history[i];
      if (m.role === 'user') {
        if (isSummaryMessage(m)) break;
        userTurns++;
        continue;
      }
      if (userTurns < OPENCODE_SKIPPED_USER_TURNS || m.role !== 'tool') continue;
      const t = estimator.message(m);
      seen += t;
      if (seen > OPENCODE_PRUNE_PROTECT) {
        prune.push(i);
        freed += t;
      }
    }
    if (freed < OPENCODE_PRUNE_MINIMUM) return Promise.resolve(history);
    return Promise.resolve(
      replaceResults(history, prune, memo, (m) => ({ ...m, content: OPENCODE_PLACEHOLDER })),
    );
  },
};
