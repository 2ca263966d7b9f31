import { describe, expect, it } from '@jest/globals';
import { allStateIds, allTransitionKeys } from '#support/graph-helpers.js';
import { runRow } from '#support/oracle.js';
import { ORACLE_TABLES } from '#support/oracles/index.js';

/** Prints and checks the coverage of one machine. */
function expectFullCoverage(
  id: string,
  states: Set<string>,
  transitions: Set<string>,
  covered: { states: Set<string>; transitions: Set<string> },
): void {
  const coveredStates = [...states].filter((s) => covered.states.has(s));
  const coveredTransitions = [...transitions].filter((t) => covered.transitions.has(t));
  console.log(
    `${id}: states ${coveredStates.length}/${states.size}, transitions ${coveredTransitions.length}/${transitions.size}`,
  );
  expect([...states].filter((s) => !covered.states.has(s))).toEqual([]);
  expect([...transitions].filter((t) => !covered.transitions.has(t))).toEqual([]);
}

describe('the oracle rows drive every state and transition of each machine', () => {
  for (const { machine, rows } of ORACLE_TABLES)
    it(`${machine.id}: ${rows.length} oracle rows reach 100 % of states and transitions`, async () => {
      const covered = { states: new Set<string>(), transitions: new Set<string>() };
      for (const row of rows) {
        const run = await runRow(machine, row);
        run.stateIds.forEach((s) => covered.states.add(s));
        run.transitions.forEach((t) => covered.transitions.add(t));
      }
      expectFullCoverage(machine.id, allStateIds(machine), allTransitionKeys(machine), covered);
    });
});
