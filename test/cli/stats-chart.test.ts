import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/counters.js';
import { repoRoot } from '#support/paths.js';
import { runCli } from '#support/cli-in-dir.js';

afterAll(freeEncoders);
const dir = mkdtempSync(join(tmpdir(), 'compactor-chart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DJANGO = join(repoRoot, 'examples/sessions/django__django-16560.traj.json');

/** Counts of the chart's classed elements. */
function elements(svg: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of svg.matchAll(/class="([a-z-]+)"/g)) out[m[1]] = (out[m[1]] ?? 0) + 1;
  return out;
}

describe('compactor stats/run --chart', () => {
  it('H5: stats --chart (preset vtcode) draws before/after lines, window, trigger, threshold, clearing and compaction marks', async () => {
    const out = join(dir, 'django.svg');
    const r = await runCli(
      ['stats', DJANGO, '--chart', out, '--capacity', '32000', '--preset', 'vtcode'],
      dir,
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const svg = readFileSync(out, 'utf8');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    const e = elements(svg);
    expect(e).toMatchObject({ before: 1, after: 1, window: 1, trigger: 1, threshold: 1 });
    // 145 turns of a 47k-token session in a 32k window: clearing applies and compaction runs.
    expect(e.clearing).toBeGreaterThan(0);
    expect(e.compaction).toBeGreaterThan(0);
    expect(svg).toContain('window 32,000');
    const points = /class="before"[^>]*points="([^"]*)"/.exec(svg)?.[1].trim().split(' ') ?? [];
    expect(points).toHaveLength(145);
  });

  it('H5: a wider window moves the lines and needs no compaction', async () => {
    const out = join(dir, 'wide.svg');
    const r = await runCli(['stats', DJANGO, '--chart', out, '--capacity', '200000'], dir);
    expect(r.code).toBe(0);
    const e = elements(readFileSync(out, 'utf8'));
    expect(e.compaction ?? 0).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('window 200,000');
  });

  it('D3: --chart is validated before any work: wrong extension, missing directory (exit 2, nothing written)', async () => {
    const bad = await runCli(['stats', DJANGO, '--chart', join(dir, 'x.png')], dir);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/stats: --chart: expected a file name ending in \.svg/);
    const missing = await runCli(['stats', DJANGO, '--chart', join(dir, 'nope/x.svg')], dir);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/stats: --chart: directory not found/);
    const before = readdirSync(dir).length;
    const run = await runCli(['run', DJANGO, '--chart', join(dir, 'nope/y.svg')], dir);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/run: --chart: directory not found/);
    expect(readdirSync(dir).length).toBe(before);
  });

  it('H5: run --chart writes the same kind of chart for the session it ran', async () => {
    const out = join(dir, 'run.svg');
    const r = await runCli(['run', DJANGO, '--chart', out], dir);
    expect(r.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    const e = elements(readFileSync(out, 'utf8'));
    expect(e).toMatchObject({ before: 1, after: 1, window: 1, trigger: 1, threshold: 1 });
    expect(e.compaction).toBeGreaterThan(0);
  });
});
