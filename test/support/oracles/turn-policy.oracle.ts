import type { OracleRow } from '../oracle.js';
import {
  clearedFirst,
  COMPACTING,
  input,
  localPass,
  LOCAL_CALLS,
  pipeline,
  PIPELINE,
  PIPELINE_CALLS,
  POLICY,
  pressure,
  rebuiltProjection,
  sent,
} from './turn.replies.js';

/*
 * The policy numbers the turn machine decides from measured facts: this turn's threshold while
 * the prompt cache holds (and whether the wait pays by expected cost), the cache cycle it hands
 * on, the last request sent it compares against, and the prompt budget a request is fitted to.
 */

/** Waits while the cache holds: 85 % of the way from 6,000 to 8,000, so to 7,700 tokens. */
const waiting = { ...POLICY, waitsForCacheBreak: true };
const afterOne = { lastSent: sent(11), cacheCycle: { last: 6_000, maxStep: 0, afterPass: 2_000 } };
/** A last request sent that carried the results of calls c1 and c2 cleared. */
const clearedSent = { count: 11, print: 'p11', clearedCallIds: ['c1', 'c2'] };

export const TURN_POLICY_ROWS: readonly OracleRow[] = [
  {
    name: 'H5: while the request extends the last one sent, compaction waits past the threshold and the cache cycle grows',
    input: { ...input, policy: waiting, ...afterOne },
    replies: pipeline(pressure(7_500, 20, { prefixIntact: true })),
    expect: {
      states: [...PIPELINE, 'belowThreshold'],
      calls: PIPELINE_CALLS,
      inputs: { clearToolResults: [{ keepCleared: [] }], estimatePressure: [{ sent: sent(11) }] },
      output: {
        decision: 'below-threshold',
        thresholdTokens: 7_700,
        cacheCycle: { last: 7_500, maxStep: 1_500, afterPass: 2_000 },
        lastSent: sent(12),
      },
    },
  },
  {
    name: 'H5: a request whose prefix changed compacts at the threshold; the pass starts a new cache cycle from the rebuilt request',
    input: { ...input, policy: waiting, ...afterOne },
    replies: { ...pipeline(pressure(7_500)), ...localPass, rebuildProjection: [rebuiltProjection] },
    expect: {
      states: [...COMPACTING, 'working.rebuildingProjection', 'working.settling', 'compacted'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection'],
      inputs: { rebuildProjection: [{ historyRef: 't1:compacted', keepCleared: [] }] },
      output: {
        decision: 'compacted',
        thresholdTokens: 6_000,
        cacheCycle: { last: 3_000, maxStep: 0, afterPass: 3_000 },
        lastSent: sent(5),
      },
    },
  },
  {
    name: 'H5: by expected cost, a cache that grows 100 tokens a request cannot pay for the wait: compaction runs at the threshold',
    input: {
      ...input,
      policy: { ...waiting, waitByCost: true },
      lastSent: sent(11),
      cacheCycle: { last: 7_400, maxStep: 0, afterPass: 2_000 },
    },
    replies: {
      ...pipeline(pressure(7_500, 20, { prefixIntact: true })),
      ...localPass,
      rebuildProjection: [rebuiltProjection],
    },
    expect: {
      states: [...COMPACTING, 'working.rebuildingProjection', 'working.settling', 'compacted'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection'],
      output: { decision: 'compacted', thresholdTokens: 6_000 },
    },
  },
  {
    name: 'H5: by expected cost, a cache that grows 1,500 tokens a request pays for the wait',
    input: { ...input, policy: { ...waiting, waitByCost: true }, ...afterOne },
    replies: pipeline(pressure(7_500, 20, { prefixIntact: true })),
    expect: {
      states: [...PIPELINE, 'belowThreshold'],
      calls: PIPELINE_CALLS,
      output: { decision: 'below-threshold', thresholdTokens: 7_700 },
    },
  },
  {
    name: 'H5: a result the last request sent had cleared stays cleared: putting it back would rewrite the cached request only to clear it again',
    input: { ...input, lastSent: clearedSent },
    replies: pipeline(pressure(5_000)),
    expect: {
      states: [...PIPELINE, 'belowThreshold'],
      calls: PIPELINE_CALLS,
      inputs: {
        clearToolResults: [{ keepCleared: ['c1', 'c2'] }],
        estimatePressure: [{ sent: clearedSent }],
      },
      output: { decision: 'below-threshold' },
    },
  },
  {
    name: 'H5: a result cleared before stays cleared when old results are cleared first instead of a pass',
    input: { ...input, minTurnsPerPass: 10, lastSent: clearedSent },
    replies: {
      ...pipeline(pressure(7_000, 5, { sent: clearedSent })),
      clearBeforeCompacting: [clearedFirst(5_000)],
    },
    expect: {
      states: [...PIPELINE, 'working.clearingFirst', 'cleared'],
      calls: [...PIPELINE_CALLS, 'clearBeforeCompacting'],
      inputs: {
        clearToolResults: [{ keepCleared: ['c1', 'c2'] }],
        clearBeforeCompacting: [{ keepCleared: ['c1', 'c2'] }],
      },
      output: { decision: 'cleared', summaryCalls: 0 },
    },
  },
  {
    name: "H5: where the session's own rules clear old results every turn, they decide again which stay cleared",
    input: { ...input, policy: { ...POLICY, clearsEachTurn: true }, lastSent: clearedSent },
    replies: pipeline(pressure(5_000)),
    expect: {
      states: [...PIPELINE, 'belowThreshold'],
      calls: PIPELINE_CALLS,
      inputs: { clearToolResults: [{ keepCleared: [] }] },
      output: { decision: 'below-threshold' },
    },
  },
];
