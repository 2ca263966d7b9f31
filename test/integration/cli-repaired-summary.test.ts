import { describe, expect, it, jest } from '@jest/globals';
import { summarySections } from '#src/summary/index.js';
import { fakeOpenAIWorkspace } from '#support/cli-sessions.js';
import { runCompiledCli } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/**
 * `compactor compact` and `compactor run` as processes against a Chat Completions server on
 * 127.0.0.1 whose first summary lacks template sections: the repair request is a second
 * provider request, and both the text report and --json say so.
 */

const KEY = 'sk-FAKE-repair-key-0123456789abcdef';
const { dir, srv: server } = fakeOpenAIWorkspace('repaired-summary');

const [goal, ...rest] = summarySections();
// Only the first heading: every other template section is missing.
const partial = `${goal}\n- Fix the failing test in src/app.ts`;
const missing = rest.map((h) => h.replace(/^#+\s*/, ''));

function cli(command: 'compact' | 'run', json: boolean) {
  return runCompiledCli(
    [
      ...[command, 'session.json', '--provider', 'openai-compatible', '--base-url', server().url],
      ...['--api-key-env', 'FAKE_KEY', '--model', 'local-model', '--capacity', '8000'],
      ...(json ? ['--json'] : []),
    ],
    { cwd: dir, env: { PATH: process.env.PATH, FAKE_KEY: KEY } },
  );
}

describe('a summary that needed the repair request is reported (§14, L8)', () => {
  it('L8: compact --json counts both provider requests and says one was a repair; the repaired summary has no warnings', async () => {
    server().requests.length = 0;
    server().script.push({ kind: 'summary-text', text: partial });
    const r = await cli('compact', true);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(server().requests).toHaveLength(2);
    expect(JSON.parse(r.out)).toMatchObject({
      status: 'compacted',
      strategy: 'local',
      summaryCalls: 2,
      repairRequests: 1,
      warnings: [],
      missingSections: [],
    });
  });

  it('L8: compact text report says summary calls: 2, that the summary was repaired, and lists what it still lacks', async () => {
    server().requests.length = 0;
    server().script.push({ kind: 'summary-text', text: partial }, { kind: 'summary-text', text: partial });
    const r = await cli('compact', false);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(server().requests).toHaveLength(2);
    expect(r.out).toMatch(/^strategy: local; summary calls: 2 \(1 repair request\)$/m);
    expect(r.out).toMatch(/^summary: repaired — .*still lacks some$/m);
    const warning = r.out.split('\n').find((l) => l.startsWith('warning: '));
    expect(warning).toBeDefined();
    for (const section of missing) expect(warning).toContain(section);
    expect(r.out).not.toContain(KEY);
  });

  it('L8: run --json carries the repair request, the warnings and the missing sections', async () => {
    server().requests.length = 0;
    server().script.push({ kind: 'summary-text', text: partial }, { kind: 'summary-text', text: partial });
    const r = await cli('run', true);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(server().requests).toHaveLength(2);
    const j = JSON.parse(r.out) as {
      summaryCalls: number;
      repairRequests: number;
      warnings: string[];
      missingSections: string[];
    };
    expect(j).toMatchObject({ decision: 'compacted', summaryCalls: 2, repairRequests: 1 });
    expect(j.warnings).toHaveLength(1);
    expect(j.missingSections).toEqual(missing);
  });

  it('L8: run text report counts 2 summary calls and says the summary was repaired', async () => {
    server().requests.length = 0;
    server().script.push({ kind: 'summary-text', text: partial });
    const r = await cli('run', false);
    expect(r.code).toBe(0);
    expect(server().requests).toHaveLength(2);
    expect(r.out).toMatch(/^strategy: local; summary calls: 2 \(1 repair request\)$/m);
    expect(r.out).toMatch(/^summary: repaired — .*has them all$/m);
    expect(r.out).not.toMatch(/^warning: /m);
  });
});
