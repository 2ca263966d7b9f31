import fc from 'fast-check';
import { charsCounter } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { msg } from '#src/messages/message.js';
import type { CompactorSessionOptions, SessionTurnResult } from '#src/session/index.js';

/** A session's turns as a property test plays them: its settings and how much each turn adds. */
export interface TurnPlan {
  capacity: number;
  waitByCost: boolean;
  waitsForCacheBreak: boolean;
  clearFirst: boolean;
  /** Exchanges each turn adds. */
  growth: number[];
}

/** Plans that reach compaction at some turns and wait for the prompt cache at others. */
export const turnPlans = fc.record({
  capacity: fc.constantFrom(8_000, 12_000, 16_000),
  waitByCost: fc.boolean(),
  waitsForCacheBreak: fc.boolean(),
  clearFirst: fc.boolean(),
  growth: fc.array(fc.integer({ min: 2, max: 12 }), { minLength: 3, maxLength: 6 }),
});

/** The opening every plan's session starts from. */
export const PLAN_OPENING = [msg.system('You are a coding agent.'), msg.user('Fix the parser.')];

/** Counts characters: fast, and the same on every run. */
const estimator = createEstimator({ counter: charsCounter });

/** The session settings of a plan. */
export const planOptions = (p: TurnPlan) =>
  ({
    estimator,
    limits: { capacity: p.capacity, reservedOutput: 1_000 },
    compaction: { waitByCost: p.waitByCost, waitsForCacheBreak: p.waitsForCacheBreak },
    policy: p.clearFirst ? {} : { clearWhenPassBuysFewerTurns: 0 },
  }) satisfies CompactorSessionOptions;

/** What a turn decided and sent, without its timing. */
export const observedTurn = (r: SessionTurnResult) =>
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
