import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { commands } from '#src/cli/commands/index.js';
import { runCli } from '#support/cli.js';
import { requireBuild, runCompiledCli } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

// A rule id (a capital letter and a number, as test names cite them) standing in text a user
// reads. The rules are not in the package, so a user cannot look one up: help, reports and
// errors say it in words.
const RULE_ID = /\b[A-Z]\d{1,2}\b/g;
const EXAMPLE = resolve('examples/sessions/django__django-16560.traj.json');
/**
 * A working directory whose config selects the chars estimator: these tests read words, not
 * token counts, so the 480 KB sample is not tokenized by tiktoken in each of the runs.
 */
function wordsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-words-'));
  writeFileSync(join(dir, 'compactor.config.json'), JSON.stringify({ encoding: 'chars' }));
  return dir;
}
const shared = wordsDir();
// The words come from the same main either way, so most runs call it in-process; the compiled
// bin, as a user starts it, runs for the top-level help and an unknown command.
const compactor = (args: string[], cwd = shared) => runCli(args, { cwd });
const compiled = (args: string[], cwd = shared) => runCompiledCli(args, { cwd });

/** The rule ids in a command's output (stdout and stderr), with the command for the failure message. */
async function idsIn(
  args: string[],
  cwd?: string,
): Promise<{ args: string; code: number | null; ids: unknown }> {
  const r = await compactor(args, cwd);
  return { args: args.join(' '), code: r.code, ids: `${r.out}\n${r.err}`.match(RULE_ID) };
}

/** Every key and every string value of a JSON report, flattened. */
function wordsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(wordsOf);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [k, ...wordsOf(v)]);
  return [];
}

beforeAll(requireBuild);

describe('plain words: help, reports and errors carry no rule ids', () => {
  it('the top-level help and every command --help name no rule id', async () => {
    const names = Object.keys(commands);
    expect(names).toEqual(
      expect.arrayContaining(['import', 'stats', 'restore', 'plan', 'project', 'run', 'compact']),
    );
    const top = await compiled(['--help']);
    expect(top.code).toBe(0);
    expect(top.out).toContain('Usage: compactor');
    expect(top.out.match(RULE_ID)).toBeNull();
    // The in-process main prints the same help as the bin.
    expect((await compactor(['--help'])).out).toBe(top.out);
    for (const name of names) {
      const r = await compactor([name, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`compactor ${name}`);
      expect({ name, ids: r.out.match(RULE_ID) }).toEqual({ name, ids: null });
    }
  });

  it('the reports of every command on a sample session name no rule id', async () => {
    const cwd = wordsDir();
    const runs = [
      ['run', EXAMPLE, '--session-dir', 's'],
      ['compact', EXAMPLE],
      ['stats', EXAMPLE],
      ['import', EXAMPLE, '--to', 'openai-chat', '--out', 'chat.json'],
      ['plan', '--capacity', '128000'],
      ['plan', '--capacity', '128000', '--evidence-ratio', '0.25'],
      // The defaults keep tool results; the vtcode preset clears, so the report gives its reasons.
      ['project', EXAMPLE, '--capacity', '20000', '--preset', 'vtcode'],
      ['project', EXAMPLE, '--capacity', '200000', '--preset', 'vtcode'],
      ['restore', 's'],
    ];
    const found = [];
    for (const args of runs) found.push(await idsIn(args, cwd));
    expect(found).toEqual(runs.map((args) => ({ args: args.join(' '), code: 0, ids: null })));
  });

  it('the clearing report says why in words (the reasons a rule id used to stand for)', async () => {
    const r = await compactor(['project', EXAMPLE, '--capacity', '20000', '--preset', 'vtcode']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/why: trigger reached: \d+ ≥ \d+ tokens; evidence window kept \d+ batch/);
    const plan = await compactor(['plan', '--capacity', '128000']);
    expect(plan.out).toMatch(
      /^capacity +128,000 +the smaller of the provider's limit and the session ceiling$/m,
    );
    expect(plan.out).toMatch(/^evidence budget +20,000 +half the local trigger$/m);
  });

  it('the run and compact --json reports: no key and no value names a rule id', async () => {
    for (const [command, outcome] of [
      ['run', 'decision'],
      ['compact', 'status'],
    ]) {
      const r = await compactor([command, EXAMPLE, '--preset', 'vtcode', '--json']);
      expect(r.code).toBe(0);
      const words = wordsOf(JSON.parse(r.out));
      expect(words).toEqual(expect.arrayContaining([outcome, 'strategyReason', 'compacted']));
      expect({ command, ids: words.filter((w) => w.match(RULE_ID)) }).toEqual({ command, ids: [] });
    }
  });

  it('error messages name no rule id', async () => {
    const cwd = wordsDir();
    const unknown = await compiled(['frobnicate'], cwd);
    expect({ code: unknown.code, ids: `${unknown.out}\n${unknown.err}`.match(RULE_ID) }).toEqual({
      code: 2,
      ids: null,
    });
    const bad = [
      ['frobnicate'],
      ['run', 'missing.json'],
      ['run', EXAMPLE, '--capacity', 'big'],
      ['run', EXAMPLE, '--provider', 'nowhere', '--model', 'm'],
      ['plan', '--evidence-ratio', '2'],
      ['restore', 'no-such-dir'],
      ['import', EXAMPLE, '--to', 'nonsense'],
    ];
    const found = [];
    for (const args of bad) found.push(await idsIn(args, cwd));
    expect(found).toEqual(bad.map((args) => ({ args: args.join(' '), code: 2, ids: null })));
  });
});
