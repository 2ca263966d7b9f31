import { afterAll, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import { isSummaryMessage } from '#src/summary/index.js';
import { REINJECTION_METADATA_KIND } from '#src/summary/summary-message.js';
import { agentSession } from '#support/cli-sessions.js';

afterAll(freeEncoders);

const NEXT = 'Now also add a regression test for the parser.';

/** The Goal section of the history's summary message, one line each. */
function goalLines(history: readonly Message[]): string[] {
  const text = textOf(history.find(isSummaryMessage)!.content);
  return /## Goal\n([\s\S]*?)\n\n/.exec(text)![1].split('\n');
}

describe('the offline summary after two compactions in a row (L7, §14)', () => {
  it('L7/§14: "Latest request" is the user\'s last request, not the re-injected files message', async () => {
    const s = createCompactorSession({
      history: agentSession(30, 1_600, 900),
      limits: { capacity: 16_000 },
      compaction: { reinjectBudgetTokens: 800 },
    });
    expect((await s.compact()).status).toBe('compacted');
    // The first rebuild re-injected the files it read: the second pass sees that message.
    expect(s.history.some((m) => m.metadata?.kind === REINJECTION_METADATA_KIND)).toBe(true);
    s.append(msg.user(NEXT));
    for (const m of agentSession(10, 1_600, 900).slice(2)) s.append(m);
    expect((await s.compact()).status).toBe('compacted');

    const goal = goalLines(s.history);
    expect(goal.filter((l) => l.startsWith('- Latest request: '))).toEqual([`- Latest request: ${NEXT}`]);
    expect(goal.join('\n')).not.toContain('Recently touched files');
    // The first task is still the goal, said once.
    expect(goal.join('\n')).toContain("Fix the failing test in src/app.ts. Don't touch package.json.");
  });
});
