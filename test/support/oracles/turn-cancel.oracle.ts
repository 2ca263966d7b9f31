import type { OracleRow, Reply } from '../oracle.js';
import { prepared, summary } from './replies.js';
import {
  cleared,
  FRESH_GUARD,
  input,
  localPass,
  LOCAL_CALLS,
  normalized,
  pipeline,
  PIPELINE,
  PIPELINE_CALLS,
  pressure,
  synced,
} from './turn.replies.js';

/** `turn.cancelled` while the turn waits on `actor` at the end of `states`: that actor is aborted. */
function cancelWhile(
  states: string[],
  actor: string,
  replies: Record<string, readonly Reply[]>,
  calls: string[],
  extraInput: Record<string, unknown> = {},
): OracleRow {
  return {
    name: `H1: turn.cancelled while ${states.at(-1)} aborts the in-flight ${actor} and ends the turn cancelled`,
    input: { ...input, ...extraInput },
    replies: { ...replies, [actor]: ['hang'] },
    send: { type: 'turn.cancelled' },
    expect: {
      states: [...states, 'cancelled'],
      calls: [...calls, actor],
      aborted: [actor],
      output: { decision: 'cancelled', advisory: null, loopGuard: FRESH_GUARD },
    },
  };
}

/** Cancelling the turn in each working state that waits on an actor. */
export const TURN_CANCEL_ROWS: readonly OracleRow[] = [
  cancelWhile(['working.syncing'], 'syncHistory', {}, []),
  cancelWhile(['working.syncing', 'working.normalizing'], 'normalizeProjection', { syncHistory: [synced] }, [
    'syncHistory',
  ]),
  cancelWhile(
    ['working.syncing', 'working.normalizing', 'working.clearing'],
    'clearToolResults',
    { syncHistory: [synced], normalizeProjection: [normalized] },
    ['syncHistory', 'normalizeProjection'],
  ),
  cancelWhile(
    ['working.syncing', 'working.normalizing', 'working.clearing', 'working.estimating'],
    'estimatePressure',
    { syncHistory: [synced], normalizeProjection: [normalized], clearToolResults: [cleared] },
    ['syncHistory', 'normalizeProjection', 'clearToolResults'],
  ),
  cancelWhile(
    [...PIPELINE, 'working.choosing', 'working.compacting'],
    'prepareSummaryInput',
    pipeline(pressure(8_000)),
    PIPELINE_CALLS,
  ),
  cancelWhile(
    [...PIPELINE, 'working.choosing', 'working.compacting', 'working.rebuildingProjection'],
    'rebuildProjection',
    { ...pipeline(pressure(8_000)), ...localPass },
    [...PIPELINE_CALLS, ...LOCAL_CALLS],
  ),
  cancelWhile(
    [...PIPELINE, 'working.clearingFirst'],
    'clearBeforeCompacting',
    pipeline(pressure(8_000, 2)),
    PIPELINE_CALLS,
    { minTurnsPerPass: 10 },
  ),
  cancelWhile(
    [...PIPELINE, 'working.choosing', 'working.compacting', 'working.settling', 'working.fitting'],
    'fitRequest',
    {
      ...pipeline(pressure(9_000)),
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ empty: true, summaryTokens: 0 })],
    },
    [...PIPELINE_CALLS, 'prepareSummaryInput', 'requestSummary'],
  ),
];
