import { describe, expect, it } from '@jest/globals';
import { loadSummaryPrompt, summarySections } from '#src/summary/index.js';
import { SECTION_KEYS } from '#src/summary/offline/render.js';

describe('L8 summary prompt contract (prompts/summary-v1.ts)', () => {
  const prompt = loadSummaryPrompt('summary-v1');

  it('L8: lists the sections in order, separating completed, running, failed and not-run checks', () => {
    expect(prompt.sections).toEqual([
      'Goal',
      'User restrictions',
      'Completed checks',
      'Running',
      'Failed',
      'Not run',
      'Commands (exact, with exit codes)',
      'Files read',
      'Files modified',
      'Errors',
      'Pending approvals & session ids',
      'Plan & next steps',
    ]);
    expect(summarySections()).toEqual(prompt.sections);
    expect(SECTION_KEYS).toHaveLength(prompt.sections.length);
  });

  it('L8: states that model claims are not evidence and that repeated exploration is compressed first', () => {
    expect(prompt.instructions).toMatch(/Model claims are not evidence/);
    expect(prompt.instructions).toMatch(/Compress repeated exploration first/);
    expect(prompt.instructions).toMatch(/exact/i);
    expect(prompt.instructions).toMatch(/exit code/);
    expect(prompt.instructions).toMatch(/session ids/);
    expect(prompt.instructions).toMatch(/polling action/);
    expect(prompt.instructions).toMatch(/restriction/);
    expect(prompt.instructions).toMatch(/unresolved/);
  });

  it('L8: the instructions sent exclude the maintainer comment; unknown versions are refused', () => {
    expect(prompt.instructions.startsWith('<!--')).toBe(false);
    expect(prompt.version).toBe('summary-v1');
    expect(() => loadSummaryPrompt('../../etc/passwd')).toThrow(/unknown summary prompt version/);
  });
});
