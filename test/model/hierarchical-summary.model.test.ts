import { describe, expect, it } from '@jest/globals';
import { describePath, pathsFor, runPath } from '../support/graph-helpers.js';
import { hierarchicalSummaryModel } from './models/hierarchical-summary.model.js';

const paths = pathsFor(hierarchicalSummaryModel);

describe('hierarchicalSummary model paths', () => {
  it('has paths', () => expect(paths.length).toBeGreaterThan(3));
  for (const { input, path } of paths)
    it(`[${input.name}] ${describePath(path)}`, async () => {
      const run = await runPath(hierarchicalSummaryModel, input.input, path);
      run.actor.stop();
    });
});
