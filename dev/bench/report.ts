import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/io/atomic-write.js';
import { renderMarkdownTable } from './table.js';
import type { BenchContext, BenchSection } from './types.js';

/** Writes `report.md` with every section as a Markdown table, plus each section's SVG charts beside it. */
export async function writeReport(
  dir: string,
  results: Array<{ suite: string; sections: BenchSection[] }>,
  ctx: BenchContext,
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const parts = ['# Compactor benchmark report', ''];
  for (const { sections } of results)
    for (const s of sections) {
      parts.push(`## ${s.title}`, '', renderMarkdownTable(s.headers, s.rows), '');
      for (const n of s.notes ?? []) parts.push(`- ${n}`);
      parts.push('');
      for (const c of s.charts ?? []) {
        writeFileAtomic(join(dir, c.file), c.svg);
        parts.push(`![${c.title}](${c.file})`, '');
      }
    }
  writeFileAtomic(join(dir, 'report.md'), parts.join('\n'));
  ctx.log(`bench: wrote ${join(dir, 'report.md')}`);
}
