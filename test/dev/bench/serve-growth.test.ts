import { afterAll, describe, expect, it } from '@jest/globals';
import { growthSection } from '#dev/bench/serve-growth.js';
import { freeEncoders } from '#src/estimate/index.js';

/* The serve bench's growth by protocol in its quick run: only what was measured is checked, never how fast. */

afterAll(() => freeEncoders());

describe('serve bench: CPU growth by protocol', () => {
  it('measures every protocol at both history sizes, with the parse floor of the same bodies', async () => {
    const lines: string[] = [];
    const section = await growthSection({ quick: true, corpusDir: null, log: (l) => lines.push(l) });
    expect(section.rows.map((r) => r[0])).toEqual(['openai-chat', 'anthropic', 'openai-responses', 'gemini']);
    expect(lines).toHaveLength(8);
    for (const row of section.rows) {
      for (const cell of row.slice(1)) expect(typeof cell).toBe('number');
      expect(row[3]).toBeGreaterThan(0);
    }
  });
});
