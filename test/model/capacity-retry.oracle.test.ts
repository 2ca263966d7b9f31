import { describe, it } from '@jest/globals';
import { capacityRetryMachine } from '#machines/index.js';
import { expectRowMatched, runRow } from '#support/oracle.js';
import { CAPACITY_RETRY_ORACLE } from '#support/oracles/capacity-retry.oracle.js';

describe('capacityRetry follows its oracle table (L3, L5, L6)', () => {
  for (const row of CAPACITY_RETRY_ORACLE)
    it(row.name, async () => expectRowMatched(await runRow(capacityRetryMachine, row), row));
});
