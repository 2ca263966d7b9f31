import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { charsCounter, freeEncoders } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { msg } from '#src/messages/message.js';
import type { Checkpoint } from '#src/runtime/checkpoint.js';
import { readExchanges } from '#support/session/fixtures.js';
import { createCompactorSession, type SessionTurnResult } from '#src/session/index.js';

/**
 * A turn resumed from any checkpoint it took decides exactly as the uninterrupted turn did, and
 * so do the turns after it: the same decisions, thresholds and requests, the same history, the
 * same prompt-cache cycle and print of the last request handed on. Each run plays a session's turns once straight through,
 * then for every checkpoint of every turn plays it again with that turn "killed" there: a fresh
 * session, the earlier turns, the killed turn resumed from the checkpoint (through JSON, as it
 * would come back from disk or object state), then the later turns.
 */

afterAll(freeEncoders);
const estimator = createEstimator({ counter: charsCounter });

const exchanges = readExchanges;

interface Plan {
  capacity: number;
  waitByCost: boolean;
  waitsForCacheBreak: boolean;
  clearFirst: boolean;
  /** Exchanges each turn adds. */
  growth: number[];
}

const sessionOf = (p: Plan) =>
  createCompactorSession({
    estimator,
    limits: { capacity: p.capacity, reservedOutput: 1_000 },
    compaction: { waitByCost: p.waitByCost, waitsForCacheBreak: p.waitsForCacheBreak },
    policy: p.clearFirst ? {} : { clearWhenPassBuysFewerTurns: 0 },
    history: [msg.system('You are a coding agent.'), msg.user('Fix the parser.')],
  });

/** What a turn decided and sent, without its timing. */
const observed = (r: SessionTurnResult) =>
  JSON.stringify({
    decision: r.decision,
    thresholdTokens: r.thresholdTokens,
    pressureTokens: r.pressureTokens,
    summaryCalls: r.summaryCalls,
    items: r.items,
    tokens: r.tokens,
    loopGuard: r.loopGuard,
    cacheCycle: r.cacheCycle,
    lastSent: r.lastSent,
    request: r.request,
    history: r.history,
  });

/** Plays the plan; turn `kill.turn` resumes from `kill.checkpoint` instead of running. */
async function play(p: Plan, kill?: { turn: number; checkpoint: Checkpoint }) {
  const s = sessionOf(p);
  const results: string[] = [];
  const checkpoints: Checkpoint[][] = [];
  let next = 0;
  for (const [t, n] of p.growth.entries()) {
    const taken: Checkpoint[] = [];
    const pending = exchanges(next, n);
    next += n;
    const r =
      kill?.turn === t
        ? await s.runTurn({ pending, resumeFrom: kill.checkpoint })
        : await s.runTurn({ pending, onCheckpoint: (c) => taken.push(JSON.parse(JSON.stringify(c))) });
    results.push(observed(r));
    checkpoints.push(taken);
  }
  s.close();
  return { results, checkpoints };
}

describe('a resumed turn decides as an uninterrupted one', () => {
  it('R2/H5: killed at every checkpoint of every turn and resumed, a session makes the same decisions and requests', async () => {
    let resumed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          capacity: fc.constantFrom(8_000, 12_000, 16_000),
          waitByCost: fc.boolean(),
          waitsForCacheBreak: fc.boolean(),
          clearFirst: fc.boolean(),
          growth: fc.array(fc.integer({ min: 2, max: 12 }), { minLength: 3, maxLength: 6 }),
        }),
        async (plan) => {
          const straight = await play(plan);
          for (const [turn, taken] of straight.checkpoints.entries())
            for (const checkpoint of taken) {
              const again = await play(plan, { turn, checkpoint });
              expect(again.results).toEqual(straight.results);
              resumed++;
            }
        },
      ),
      { numRuns: 10 },
    );
    // The plans must reach compaction, or no checkpoint is ever taken and nothing is compared.
    expect(resumed).toBeGreaterThan(0);
  });
});
