import { describe, it } from '@jest/globals';
import { turnMachine } from '#machines/index.js';
import { expectRowMatched, runRow } from '#support/oracle.js';
import { TURN_ORACLE } from '#support/oracles/turn.oracle.js';

describe('turn follows its oracle table (H1–H6, §14)', () => {
  for (const row of TURN_ORACLE)
    it(row.name, async () => expectRowMatched(await runRow(turnMachine, row), row));
});
