import { describe, expect, it } from '@jest/globals';
import { describePath, pathsFor, runPath } from '../support/graph-helpers.js';
import { capacityRetryModel } from './models/capacity-retry.model.js';

const paths = pathsFor(capacityRetryModel);

describe('capacityRetry model paths (L5, L6)', () => {
  it('has paths', () => expect(paths.length).toBeGreaterThan(5));
  for (const { input, path } of paths)
    it(`[${input.name}] ${describePath(path)}`, async () => {
      const run = await runPath(capacityRetryModel, input.input, path);
      run.actor.stop();
    });
});
