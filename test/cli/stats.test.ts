import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/counters.js';
import { fixture, rawDir, repoRoot } from '#support/paths.js';
import { runCli } from '#support/cli-in-dir.js';

afterAll(freeEncoders);
const dir = mkdtempSync(join(tmpdir(), 'compactor-stats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('compactor stats', () => {
  it('README quick start: stats on the bundled mini-swe-agent session prints a readable report', async () => {
    const r = await runCli(['stats', 'examples/sessions/django__django-16560.traj.json'], repoRoot);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/mini-swe-agent, session django__django-16560 \(1 of 1\)/);
    expect(r.out).toMatch(/messages\s+292 {2}\(system 1, user 1, assistant 145, tool 145\)/);
    expect(r.out).toMatch(/tool calls\s+145 {2}results 145, paired 145, unmatched calls 0, orphan results 0/);
    expect(r.out).toContain('Largest tool results (top 5)');
    expect(r.out).toMatch(
      /Per tool\n\s+tool\s+calls\s+results\s+call tokens\s+result tokens\s+largest\n\s+bash\s+145\s+145/,
    );
  });

  it('--json has stable field names; parallel batches show for Claude Code', async () => {
    const file = join(rawDir, 'd-kimuson__claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl');
    const r = await runCli(['stats', file, '--json'], dir);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { format: string; sessions: Array<Record<string, unknown>> };
    expect(report.format).toBe('claude-code');
    const [s] = report.sessions;
    expect(Object.keys(s).sort()).toEqual(
      [
        'id',
        'sidechain',
        'messages',
        'byRole',
        'toolCalls',
        'toolResults',
        'pairedCalls',
        'unmatchedCalls',
        'orphanResults',
        'batches',
        'parallelBatches',
        'maxFanOut',
        'tokens',
        'largestResults',
        'tools',
      ].sort(),
    );
    expect(s).toMatchObject({ toolCalls: 12, pairedCalls: 12, parallelBatches: 2, maxFanOut: 5 });
  });

  it('--session all reports every session (Claude Code main + sidechains)', async () => {
    const r = await runCli(['stats', fixture('claude-code-small.jsonl'), '--session', 'all', '--json'], dir);
    const report = JSON.parse(r.out) as {
      sessionCount: number;
      sessions: Array<{ id: string; sidechain: boolean }>;
    };
    expect(report.sessionCount).toBe(2);
    expect(report.sessions.map((s) => [s.id, s.sidechain])).toEqual([
      ['sess-1', false],
      ['sess-1/sidechain-1', true],
    ]);
    const human = await runCli(['stats', fixture('claude-code-small.jsonl'), '--session', 'all'], dir);
    expect(human.out).toContain('(sidechain: a subagent conversation)');
  });

  it('D3: stats on a missing file is one line, exit 2', async () => {
    const r = await runCli(['stats', 'missing.json'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toBe('compactor: missing.json: cannot read file: no such file or directory (ENOENT)\n');
  });
});
