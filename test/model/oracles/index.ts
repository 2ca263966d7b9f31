import type { AnyStateMachine } from 'xstate';
import { capacityRetryMachine, hierarchicalSummaryMachine } from '../../../machines/index.js';
import type { OracleRow } from '../../support/oracle.js';
import { CAPACITY_RETRY_ORACLE } from './capacity-retry.oracle.js';
import { HIERARCHICAL_SUMMARY_ORACLE } from './hierarchical-summary.oracle.js';

/** Every machine with its oracle table, for the coverage and persistence suites. */
export const ORACLE_TABLES: ReadonlyArray<{ machine: AnyStateMachine; rows: readonly OracleRow[] }> = [
  { machine: capacityRetryMachine, rows: CAPACITY_RETRY_ORACLE },
  { machine: hierarchicalSummaryMachine, rows: HIERARCHICAL_SUMMARY_ORACLE },
];
