import { describe, expect, it } from '@jest/globals';
import { capacityRetryMachine } from '#machines/index.js';
import { expectRowMatched, runRow, type OracleRow } from '#support/oracle.js';
import { CAPACITY_RETRY_ORACLE } from '#support/oracles/capacity-retry.oracle.js';

// The harness must be able to disagree with a machine: a wrong row fails, it never passes silently.
const [first, retried] = CAPACITY_RETRY_ORACLE as [OracleRow, OracleRow];

describe('the oracle harness reports a machine that disagrees with a row', () => {
  it('a wrong final state, call list or output fails the row', async () => {
    const wrongs: OracleRow['expect'][] = [
      { ...first.expect, states: ['preparing', 'requesting', 'failed'] },
      { ...first.expect, calls: ['requestSummary'] },
      { ...first.expect, output: { status: 'exhausted' } },
      { ...first.expect, inputs: { requestSummary: [{ budget: 1_000 }] } },
    ];
    for (const expectation of wrongs) {
      const row = { ...first, expect: expectation };
      const run = await runRow(capacityRetryMachine, row);
      expect(() => expectRowMatched(run, row)).toThrow();
    }
  });

  it('a call the row has no reply for stops the run with the state and the actor named', async () => {
    const row = { ...first, replies: { prepareSummaryInput: first.replies.prepareSummaryInput! } };
    await expect(runRow(capacityRetryMachine, row)).rejects.toThrow(
      /stuck in requesting; "requestSummary" was called and the row has no reply/,
    );
  });

  it('a machine that waits less than the row says is caught before the wait ends', async () => {
    // The machine waits 250 ms; a row that claims 251 sees it leave backingOff 1 ms early.
    const row = { ...retried, waitMs: 251 };
    await expect(runRow(capacityRetryMachine, row)).rejects.toThrow(/left backingOff before 251 ms/);
  });
});
