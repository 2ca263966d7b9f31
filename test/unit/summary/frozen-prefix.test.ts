import { describe, expect, it } from '@jest/globals';
import { createEstimator } from '#src/estimate/estimator.js';
import { frozenPrefixTokens } from '#src/summary/request-fit.js';
import type { ToolSchema } from '#src/providers/types.js';

describe('the frozen prefix of a summary request', () => {
  it('counts a tool list as its JSON, serializing a list once per estimator', () => {
    let serialized = 0;
    const tool = {
      name: 'read_file',
      description: 'Reads a file of the repository.',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
    };
    const tools = [
      {
        ...tool,
        toJSON: () => {
          serialized++;
          return tool;
        },
      },
    ] as unknown as ToolSchema[];
    const est = createEstimator({ encoding: 'chars' });
    const expected = est.text('You read files.') + est.text(JSON.stringify([tool]));
    serialized = 0;
    expect(frozenPrefixTokens('You read files.', tools, est)).toBe(expected);
    expect(frozenPrefixTokens('You read files.', tools, est)).toBe(expected);
    expect(serialized).toBe(1);
    // Another estimator counts for itself; another list (the envelope changed) is serialized anew.
    expect(frozenPrefixTokens(undefined, tools, createEstimator({ encoding: 'chars' }))).toBe(
      est.text(JSON.stringify([tool])),
    );
    expect(serialized).toBe(2);
    expect(frozenPrefixTokens(undefined, [...tools], est)).toBe(est.text(JSON.stringify([tool])));
    expect(serialized).toBe(3);
  });
});
