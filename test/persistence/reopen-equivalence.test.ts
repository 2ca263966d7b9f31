import { afterAll, describe, expect, it } from '@jest/globals';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { freeEncoders } from '#src/estimate/counters.js';
import { EVENTS_FILE, loadEventLog } from '#src/store/index.js';
import { frameLine } from '#src/store/frame.js';
import { readExchanges } from '#support/session/fixtures.js';
import {
  observedTurn,
  PLAN_OPENING,
  planOptions,
  turnPlans,
  type TurnPlan as Plan,
} from '#support/session/turn-plans.js';
import { Session } from '#src/session/session.js';
import { INITIAL_LOOP_GUARD_STATE } from '#machines/index.js';

/**
 * A session reopened from its directory decides as one that never closed: each run plays a
 * session's turns once with one session object, then again with a new session object on its
 * own directory for every turn (closed after it), and compares every turn's decision and request.
 */

afterAll(freeEncoders);

type Writes = 'immediate' | 'onSuccess';

const sessionOf = (p: Plan, sessionDir: string, first: boolean, storeWrites: Writes = 'immediate') =>
  new Session({ sessionDir, storeWrites, ...planOptions(p), ...(first ? { history: PLAN_OPENING } : {}) });

/** Plays the plan in `dir`: one session throughout, or (`reopen`) a new one for every turn. */
async function play(p: Plan, dir: string, reopen: boolean, writes: Writes = 'immediate') {
  const results: string[] = [];
  let s = sessionOf(p, dir, true, writes);
  let next = 0;
  for (const [t, n] of p.growth.entries()) {
    if (reopen && t > 0) {
      s.close();
      s = sessionOf(p, dir, false, writes);
    }
    const pending = readExchanges(next, n);
    next += n;
    results.push(observedTurn(await s.runTurn({ pending })));
  }
  s.close();
  return results;
}

describe('a session reopened from its directory decides as one that never closed', () => {
  it('R2: closed and reopened between every turn, a session makes the same decisions and requests', async () => {
    let compacted = 0;
    await fc.assert(
      // Writes made at once keep the carry a turn starts from; held ones, the one after it.
      fc.asyncProperty(turnPlans, fc.constantFrom<Writes>('immediate', 'onSuccess'), async (plan, writes) => {
        const root = mkdtempSync(join(tmpdir(), 'compactor-reopen-'));
        try {
          const straight = await play(plan, join(root, 'straight'), false);
          const reopened = await play(plan, join(root, 'reopened'), true, writes);
          expect(reopened).toEqual(straight);
          // What is kept stays small, whatever the session's length: a commit line with the carry.
          const notes = readFileSync(join(root, 'reopened', EVENTS_FILE), 'utf8')
            .split('\n')
            .filter((l) => l.startsWith('{"commit":') && l.includes('"carry":'));
          expect(notes.length).toBeGreaterThan(0);
          for (const line of notes) expect(Buffer.byteLength(line)).toBeLessThan(1_000);
          compacted += straight.filter((r) => r.includes('"decision":"compacted"')).length;
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 12 },
    );
    // The plans must reach compaction, where the carried cache cycle changes the decision.
    expect(compacted).toBeGreaterThan(0);
  });

  it('R2: a kept carry this version cannot read is dropped: the next turn starts afresh', async () => {
    const root = mkdtempSync(join(tmpdir(), 'compactor-reopen-bad-'));
    const plan = {
      capacity: 12_000,
      waitByCost: true,
      waitsForCacheBreak: true,
      clearFirst: true,
      growth: [4, 4],
    };
    const file = join(root, EVENTS_FILE);
    try {
      await play(plan, root, true);
      const events = loadEventLog(file).events.length;
      const carryOf = () => {
        const s = sessionOf(plan, root, false);
        const { carry } = s;
        s.close();
        return carry;
      };
      expect(carryOf().lastSent).toBeDefined();
      for (const bad of ['not an object', { carry: { loopGuard: 7 } }, { carry: {}, startsTurn: false }]) {
        appendFileSync(file, `${frameLine({ commit: events, carry: bad })}\n`);
        expect(carryOf()).toEqual({ loopGuard: INITIAL_LOOP_GUARD_STATE });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
