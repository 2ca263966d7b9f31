import type { AnyStateMachine } from 'xstate';
import {
  capacityRetryMachine,
  compactionMachine,
  hierarchicalSummaryMachine,
  turnMachine,
} from '#machines/index.js';
import type { OracleRow } from '../oracle.js';
import { CAPACITY_RETRY_ORACLE } from './capacity-retry.oracle.js';
import { COMPACTION_ORACLE } from './compaction.oracle.js';
import { TURN_ORACLE } from './turn.oracle.js';
import { HIERARCHICAL_SUMMARY_ORACLE } from './hierarchical-summary.oracle.js';

/** Every machine with its oracle table, for the coverage and persistence suites. */
export const ORACLE_TABLES: ReadonlyArray<{ machine: AnyStateMachine; rows: readonly OracleRow[] }> = [
  { machine: turnMachine, rows: TURN_ORACLE },
  { machine: compactionMachine, rows: COMPACTION_ORACLE },
  { machine: capacityRetryMachine, rows: CAPACITY_RETRY_ORACLE },
  { machine: hierarchicalSummaryMachine, rows: HIERARCHICAL_SUMMARY_ORACLE },
];
