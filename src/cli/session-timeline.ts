import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import type { SettingsInput } from '../projection/index.js';
import { createCompactorSession } from '../session/index.js';
import type { SessionTimeline, TimelineTurn } from '../stats/timeline.js';

/** Options of {@link sessionTimeline}. */
export interface TimelineOptions extends SettingsInput {
  estimator: Estimator;
}

/**
 * Replays a recorded session the way a Compactor session sends it, because it is one: a
 * session with the offline summarizer (no network) runs a turn before every recorded
 * assistant message with the messages recorded since as its new messages, so the chart
 * shows the product's own clearing and compaction.
 */
export async function sessionTimeline(
  messages: readonly Message[],
  opts: TimelineOptions,
): Promise<SessionTimeline> {
  const est = opts.estimator;
  const session = createCompactorSession({
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(opts.policy ? { policy: opts.policy } : {}),
    ...(opts.compaction ? { compaction: opts.compaction } : {}),
    estimator: est,
    route: { provider: 'offline' },
  });
  const turns: TimelineTurn[] = [];
  let next = 0;
  try {
    for (let t = 0; t < messages.length; t++) {
      if (messages[t].role !== 'assistant') continue;
      const pending = messages.slice(next, t);
      next = t;
      const before = est.history(session.history) + est.history(pending);
      const r = await session.runTurn({ pending });
      turns.push({
        index: t,
        before,
        after: est.history(r.request ?? session.history),
        cleared: r.clearing?.clearedResults ?? 0,
        compacted: r.compaction?.status === 'compacted',
      });
    }
  } finally {
    session.close();
  }
  const budgets = session.budgets;
  return {
    turns,
    capacity: budgets.capacity,
    localTrigger: budgets.localTrigger,
    compactionThreshold: budgets.compactionThreshold,
  };
}
