import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { freeEncoders } from '#src/estimate/counters.js';
import type { Checkpoint } from '#src/runtime/checkpoint.js';
import { readExchanges } from '#support/session/fixtures.js';
import {
  observedTurn,
  PLAN_OPENING,
  planOptions,
  turnPlans,
  type TurnPlan as Plan,
} from '#support/session/turn-plans.js';
import { createCompactorSession } from '#src/session/index.js';

/**
 * A turn resumed from any checkpoint it took decides exactly as the uninterrupted turn did, and
 * so do the turns after it: the same decisions, thresholds and requests, the same history, the
 * same prompt-cache cycle and print of the last request handed on. Each run plays a session's turns once straight through,
 * then for every checkpoint of every turn plays it again with that turn "killed" there: a fresh
 * session, the earlier turns, the killed turn resumed from the checkpoint (through JSON, as it
 * would come back from disk or object state), then the later turns.
 */

afterAll(freeEncoders);

const sessionOf = (p: Plan) => createCompactorSession({ ...planOptions(p), history: PLAN_OPENING });

const observed = observedTurn;

/** Plays the plan; turn `kill.turn` resumes from `kill.checkpoint` instead of running. */
async function play(p: Plan, kill?: { turn: number; checkpoint: Checkpoint }) {
  const s = sessionOf(p);
  const results: string[] = [];
  const checkpoints: Checkpoint[][] = [];
  let next = 0;
  for (const [t, n] of p.growth.entries()) {
    const taken: Checkpoint[] = [];
    const pending = readExchanges(next, n);
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

/**
 * Plays `numRuns` plans straight, then again killed at each checkpoint `pick` keeps of every
 * turn and resumed from it as `as` hands it back; every replay must match. Returns how many ran.
 */
async function resumedEverywhere(
  numRuns: number,
  pick: (taken: Checkpoint[]) => Checkpoint[],
  as: (c: Checkpoint) => Checkpoint,
): Promise<number> {
  let resumed = 0;
  await fc.assert(
    fc.asyncProperty(turnPlans, async (plan) => {
      const straight = await play(plan);
      for (const [turn, taken] of straight.checkpoints.entries())
        for (const checkpoint of pick(taken)) {
          const again = await play(plan, { turn, checkpoint: as(checkpoint) });
          expect(again.results).toEqual(straight.results);
          resumed++;
        }
    }),
    { numRuns },
  );
  return resumed;
}

describe('a resumed turn decides as an uninterrupted one', () => {
  it('R2/H5: killed at every checkpoint of every turn and resumed, a session makes the same decisions and requests', async () => {
    const resumed = await resumedEverywhere(
      10,
      (taken) => taken,
      (c) => c,
    );
    // The plans must reach compaction, or no checkpoint is ever taken and nothing is compared.
    expect(resumed).toBeGreaterThan(0);
  });
});

/** The checkpoint as an older version wrote it: what the turn was given beside the rest of its context. */
function flattened(checkpoint: Checkpoint): Checkpoint {
  const snapshot = checkpoint.snapshot as { context: { given?: object } };
  const { given, ...rest } = snapshot.context;
  return { ...checkpoint, snapshot: { ...snapshot, context: { ...rest, ...given } } };
}

describe('a checkpoint of an older version resumes', () => {
  it('R2: a turn context without `given` (the older layout) resumes to the same decisions and requests', async () => {
    const resumed = await resumedEverywhere(5, (taken) => taken.slice(0, 2), flattened);
    expect(resumed).toBeGreaterThan(0);
  });
});
