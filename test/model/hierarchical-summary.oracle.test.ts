import { describe, it } from '@jest/globals';
import { hierarchicalSummaryMachine } from '#machines/index.js';
import { expectRowMatched, runRow } from '#support/oracle.js';
import { HIERARCHICAL_SUMMARY_ORACLE } from '#support/oracles/hierarchical-summary.oracle.js';

describe('hierarchicalSummary follows its oracle table (L4–L6)', () => {
  for (const row of HIERARCHICAL_SUMMARY_ORACLE)
    it(row.name, async () => expectRowMatched(await runRow(hierarchicalSummaryMachine, row), row));
});
