import { afterAll, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import { testRunBatches } from '#support/test-run-batches.js';
import { isProtocolValid, isSummaryMessage } from '#src/summary/index.js';

/**
 * Automatic and hierarchical compaction on the bundled real session (mini-swe-agent,
 * django__django-16560: one user task answered by 290 messages, ≈46.8k tokens o200k), at the
 * offline default window of 32,000 with 4,000 reserved for output — the cases a review found
 * failing: a fresh small user message synced as pending, a single-task session in
 * hierarchical mode, and a second compaction of an already-compacted history.
 */

afterAll(freeEncoders);
const history: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]
  .messages;
const limits = { capacity: 32_000, reservedOutput: 4_000 };

describe('automatic compaction of a real session (django__django-16560, offline, 32k)', () => {
  it('L3: a pending "continue" after the long task still compacts: the task group goes into the fork as bounded previews', async () => {
    const session = createCompactorSession({ history, limits });
    const result = await session.runTurn({ pending: [msg.user('continue')] });
    expect(result.compaction?.failure ?? null).toBeNull();
    expect(result.decision).toBe('compacted');
    expect(result.summaryCalls).toBe(1);
    expect(result.tokens.afterCompaction!).toBeLessThan(result.thresholdTokens!);
    expect(isProtocolValid(session.history)).toBe(true);
    // The summary covers the task (its commands), not just the word "continue".
    const summary = textOf(session.history.find(isSummaryMessage)!.content);
    expect(summary).toMatch(/django/i);
    expect(textOf(session.history[session.history.length - 1].content)).toBe('continue');
  });

  it('L4: hierarchical mode compacts the single-task session with two band calls (the bands reach into the one long group)', async () => {
    const session = createCompactorSession({ history, limits, hierarchical: true });
    const result = await session.runTurn();
    expect(result.compaction?.failure ?? null).toBeNull();
    expect(result.decision).toBe('compacted');
    expect(result.summaryCalls).toBe(2);
    expect(result.tokens.afterCompaction!).toBeLessThan(result.thresholdTokens!);
    expect(isProtocolValid(session.history)).toBe(true);
    const leads = session.history.filter(isSummaryMessage).map((m) => textOf(m.content));
    expect(leads).toHaveLength(2);
    expect(leads[0]).toMatch(/^Earlier context \(abstract\):/);
    expect(leads[1]).toMatch(/^Recent context \(summary\):/);
  });

  it.each([false, true])(
    '§14: a second automatic compaction of a compacted history carries the previous summary forward (hierarchical: %s)',
    async (hierarchical) => {
      const session = createCompactorSession({ history, limits, hierarchical });
      expect((await session.runTurn()).decision).toBe('compacted');
      const more = testRunBatches(150);
      const decisions: string[] = [];
      // Spread over turns, as an agent loop would sync them (the refill guard needs turns to pass).
      for (let k = 0; k < 5 && !decisions.includes('compacted'); k++) {
        const r = await session.runTurn({ pending: more.slice(k * 60, (k + 1) * 60) });
        expect(r.compaction?.failure ?? null).toBeNull();
        decisions.push(r.decision);
      }
      expect(decisions).toContain('compacted');
      expect(isProtocolValid(session.history)).toBe(true);
      const leads = session.history.filter(isSummaryMessage).map((m) => textOf(m.content));
      // One new summary (two band messages when hierarchical); the old one is not kept beside it.
      expect(leads).toHaveLength(hierarchical ? 2 : 1);
      const all = leads.join('\n');
      // The first goal survives the second pass, and the new work is summarized.
      expect(all).toContain('Allow to customize the code attribute of ValidationError');
      expect(leads[0]).not.toMatch(
        /^\S[^\n]*\n## Goal\n- (?:Earlier context|Previous conversation summary|Recent context)/,
      );
      expect(all).toContain('python -m pytest tests/constraints -k case');
      // The retained copy of the task is not restated as a new request.
      expect(all).not.toContain('Latest request: <pr_description>');
    },
  );
});
