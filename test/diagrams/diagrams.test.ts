import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderDiagrams } from '#dev/diagrams/render.js';

const dir = join(process.cwd(), 'diagrams');

describe('diagrams/ is generated from the machines', () => {
  it('committed .mmd, .dot, .svg and README.md match a fresh render (run `npm run diagrams`)', async () => {
    const files = await renderDiagrams();
    expect(files.size).toBe(13);
    for (const [name, contents] of files) {
      let committed: string;
      try {
        committed = readFileSync(join(dir, name), 'utf8');
      } catch {
        throw new Error(`diagrams/${name} is missing: run \`npm run diagrams\``);
      }
      if (committed !== contents) throw new Error(`diagrams/${name} is stale: run \`npm run diagrams\``);
    }
  });

  it('rendering is deterministic', async () => {
    expect([...(await renderDiagrams())]).toEqual([...(await renderDiagrams())]);
  });

  it('labels are readable and always edges are drawn (dashed in DOT) with guard names', async () => {
    const files = await renderDiagrams();
    const turn = files.get('turn.dot')!;
    expect(turn).toMatch(
      /"turn\.working\.choosing" -> "turn\.working\.compacting" \[label="always" style=dashed\]/,
    );
    expect(turn).toContain('always [isBelowThreshold]');
    expect(files.get('capacity-retry.mmd')).toContain('after retryBackoff');
    expect(files.get('capacity-retry.dot')).toContain(
      'error: requestSummary [retryableCapacityRejection] / countCall, halveBudget',
    );
    for (const [name, text] of files)
      if (!name.endsWith('.svg')) expect(text).not.toMatch(/xstate\.(done|error|after)/);
  });

  it('every outcome is a final state (double border) and descriptions reach the SVG and the README', async () => {
    const files = await renderDiagrams();
    const turn = files.get('turn.dot')!;
    for (const outcome of ['belowThreshold', 'guarded', 'compacted', 'unchanged', 'failed', 'cancelled'])
      expect(turn).toMatch(new RegExp(`"turn\\.${outcome}" \\[label="${outcome}" peripheries=2 tooltip="`));
    expect(turn).toContain('tooltip="Appends pending conversation messages to the live history."');
    expect(files.get('turn.svg')).toContain('Appends pending conversation messages to the live history.');
    expect(files.get('README.md')).toContain(
      '| `working.syncing` | Appends pending conversation messages to the live history. |',
    );
  });
});
