import { describe, expect, it } from '@jest/globals';
import { allStateIds, allTransitionKeys, coverageOf, pathsFor } from '../support/graph-helpers.js';
import { ALL_MODELS } from './models.js';

describe('model paths cover every state and transition (xstate.md §A2.5)', () => {
  for (const model of ALL_MODELS)
    it(`${model.machine.id}: 100 % of states and transitions`, () => {
      const covered = coverageOf(model, pathsFor(model));
      const states = allStateIds(model.machine);
      const transitions = allTransitionKeys(model.machine);
      const coveredStates = [...states].filter((s) => covered.states.has(s));
      const coveredTransitions = [...transitions].filter((t) => covered.transitions.has(t));
      console.log(
        `${model.machine.id}: states ${coveredStates.length}/${states.size}, transitions ${coveredTransitions.length}/${transitions.size}`,
      );
      expect([...states].filter((s) => !covered.states.has(s))).toEqual([]);
      expect([...transitions].filter((t) => !covered.transitions.has(t))).toEqual([]);
    });
});
