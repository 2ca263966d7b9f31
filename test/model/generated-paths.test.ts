import { describe, expect, it } from '@jest/globals';
import { generatePaths, type PathModel } from '#src/testing/generate-paths.js';
import {
  capacityRetryModel,
  compactionModel,
  hierarchicalSummaryModel,
  turnModel,
} from '#src/testing/models.js';
import { runPathOn as runPath } from '#src/testing/run-path.js';
import { allStateIds, allTransitionKeys } from '#support/graph-helpers.js';

const MODELS: PathModel[] = [capacityRetryModel, hierarchicalSummaryModel, compactionModel, turnModel];

describe.each(MODELS)('paths generated from the $machine.id graph (L3–L7, H1–H6)', (model) => {
  const paths = generatePaths(model);
  console.log(`${model.machine.id}: ${paths.length} generated paths`);

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (_name, path) => {
    await runPath(model.machine, path, model.oracle);
  });

  it('the generated paths reach 100 % of states and transitions', async () => {
    const states = new Set<string>();
    const transitions = new Set<string>();
    for (const path of paths) {
      const run = await runPath(model.machine, path, model.oracle);
      run.stateIds.forEach((s) => states.add(s));
      run.transitions.forEach((t) => transitions.add(t));
    }
    expect([...allStateIds(model.machine)].filter((s) => !states.has(s))).toEqual([]);
    expect([...allTransitionKeys(model.machine)].filter((t) => !transitions.has(t))).toEqual([]);
  });
});
