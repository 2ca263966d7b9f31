import { describe, expect, it } from '@jest/globals';
import { capacityRetryPaths, runPath } from 'context-compactor/testing';
import { checkEveryPath, mySummarizer, scriptedProvider } from '../../examples/testing-own-actors.js';

// The README's "Testing your own actors" example, run against the source: one it.each over
// every path of the capacity-retry ladder with the example's own summarizer.
describe('context-compactor/testing: the README example drives every path with your own summarizer', () => {
  it.each(capacityRetryPaths().map((p) => [p.name, p] as const))('%s', async (_name, path) => {
    await runPath(path, { actors: { requestSummary: mySummarizer(scriptedProvider) } });
  });

  it('the example script runs every path', async () => {
    expect(await checkEveryPath()).toBe(capacityRetryPaths().length);
  });

  it('a summarizer that misreads a capacity rejection fails the retry paths with a plain error', async () => {
    // Treats every HTTP 400 as an ordinary provider failure: no retry would ever happen.
    const careless = mySummarizer(async (request, expected) => {
      const answer = await scriptedProvider(request, expected);
      return answer.status === 400 ? { status: 500, body: answer.body } : answer;
    });
    const retried = capacityRetryPaths().find((p) => p.steps.some((s) => s.kind === 'wait'))!;
    await expect(runPath(retried, { actors: { requestSummary: careless } })).rejects.toThrow(
      /your actors led elsewhere\): expected \[.*"backingOff".*\], got \["preparing","requesting","failed"\]/,
    );
  });

  it('an actor name the machine does not invoke is refused', () => {
    expect(() => runPath(capacityRetryPaths()[0]!, { actors: { summarize: async () => ({}) } })).toThrow(
      /capacityRetry invokes no actor named summarize \(it invokes prepareSummaryInput, requestSummary\)/,
    );
  });
});
