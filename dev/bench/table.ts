/** Renders rows as an aligned plain-text table (numbers right-aligned). */
export function renderTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

/** Renders rows as a GitHub Markdown table. */
export function renderMarkdownTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  return [
    `| ${headers.join(' | ')} |`,
    `| ${numeric.map((n) => (n ? '---:' : '---')).join(' | ')} |`,
    ...cells.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** Compact human formatting: integers with separators, fractions with 3 significant digits. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  const abs = Math.abs(n);
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  return n.toPrecision(3);
}
