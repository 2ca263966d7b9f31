import { describe, it } from '@jest/globals';
import { compactionMachine } from '#machines/index.js';
import { expectRowMatched, runRow } from '#support/oracle.js';
import { COMPACTION_ORACLE } from '#support/oracles/compaction.oracle.js';

describe('compaction follows its oracle table (S1–S4, O3, A4, L4–L7, §14)', () => {
  for (const row of COMPACTION_ORACLE)
    it(row.name, async () => expectRowMatched(await runRow(compactionMachine, row), row));
});
