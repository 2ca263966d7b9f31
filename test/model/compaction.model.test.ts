import { describe, expect, it } from '@jest/globals';
import { describePath, pathsFor, runPath } from '../support/graph-helpers.js';
import { compactionModel } from './models/compaction.model.js';

const paths = pathsFor(compactionModel);

describe('compaction model paths', () => {
  it('has paths', () => expect(paths.length).toBeGreaterThan(3));
  for (const { input, path } of paths)
    it(`[${input.name}] ${describePath(path)}`, async () => {
      const run = await runPath(compactionModel, input.input, path);
      run.actor.stop();
    });
});
