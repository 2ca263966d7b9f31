import { describe, expect, it } from '@jest/globals';
import type { AnyStateNode } from 'xstate';
import { getStateNodes } from 'xstate/graph';
import { expectRowMatched, runRow } from '#support/oracle.js';
import { ORACLE_TABLES } from '#support/oracles/index.js';

/** Dot paths (below the machine) of the states that invoke an actor. */
function invokingStates(root: AnyStateNode): string[] {
  return getStateNodes(root)
    .filter((node) => node.invoke.length > 0)
    .map((node) => node.path.join('.'));
}

describe('crash → JSON round trip → restore → continue, in every invoking state', () => {
  for (const { machine, rows } of ORACLE_TABLES)
    for (const state of invokingStates(machine.root))
      it(`${machine.id}.${state}: the waited-on actor runs again and the oracle outcome is unchanged`, async () => {
        // The first row (without a cancel) that passes through the state.
        const row = rows.find((r) => r.send === undefined && r.expect.states.includes(state));
        expect(row).toBeDefined();
        const run = await runRow(machine, row!, { crashIn: state });
        expect(run.crashedCall).toBeDefined();
        expect(run.reinvoked).toContain(run.crashedCall);
        expectRowMatched(run, row!);
      });
});
