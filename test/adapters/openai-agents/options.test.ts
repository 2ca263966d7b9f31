import { describe, expect, it } from '@jest/globals';
import { compactorInputFilter } from '#src/adapters/openai-agents/index.js';
import { CompactorOptionsError } from '#src/core/errors.js';

describe('compactorInputFilter options', () => {
  it('a bad option throws one CompactorOptionsError naming the option path (one line)', () => {
    let caught: unknown;
    try {
      compactorInputFilter({ limits: { capacity: -5 } });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CompactorOptionsError);
    const error = caught as CompactorOptionsError;
    expect(error.path).toBe('compactorInputFilter: options.limits.capacity');
    expect(error.message.split('\n')).toHaveLength(1);
  });
});
