import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '#support/cli.js';

const SESSION = join(import.meta.dirname, '../../examples/sessions/django__django-16560.traj.json');
const dir = mkdtempSync(join(tmpdir(), 'compactor-flag-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const run = (args: string[]) => runCli(args, { cwd: dir });

describe('plain one-line errors for bad flags and paths (D3)', () => {
  it('D3: project --out into a missing directory says so in one line, exit 2, like import', async () => {
    for (const command of ['project', 'import']) {
      const r = await run([command, SESSION, '--out', 'missing-dir/x.json']);
      expect(r).toEqual({
        code: 2,
        out: '',
        err: `compactor: ${command}: --out: no such directory ${join(dir, 'missing-dir')}\n`,
      });
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('D3: project --out naming the input file is refused before any work', async () => {
    const r = await run(['project', SESSION, '--out', SESSION]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^compactor: project: --out: .* is an input of this command; write to another file\n$/,
    );
  });

  it.each([
    [['plan', '--capacity', '-5'], 'plan: --capacity: expected a positive whole number (got "-5")'],
    [['plan', '--capacity', '0'], 'plan: --capacity: expected a positive whole number (got "0")'],
    [
      ['plan', '--reserved-output', '-1'],
      'plan: --reserved-output: expected a whole number, 0 or more (got "-1")',
    ],
    [['plan', '--trigger', '-0.5'], 'plan: --trigger: expected a positive whole number (got "-0.5")'],
    [
      ['project', SESSION, '--keep-tool-uses', '-2'],
      'project: --keep-tool-uses: expected a whole number, 0 or more (got "-2")',
    ],
    [['run', SESSION, '--retries', '-3'], 'run: --retries: expected a whole number, 0 or more (got "-3")'],
    [
      ['stats', SESSION, '--capacity', '-5'],
      'stats: --capacity: expected a positive whole number (got "-5")',
    ],
  ])('D3: %j is a plain one-line error naming the flag, exit 2', async (args, line) => {
    expect(await run(args)).toEqual({ code: 2, out: '', err: `compactor: ${line}\n` });
  });

  it('D3: a negative number after -- stays a positional argument', async () => {
    const r = await run(['plan', '--', '-5']);
    expect(r).toEqual({ code: 2, out: '', err: "compactor: plan: unexpected argument '-5'\n" });
  });

  it('S1: an unknown provider without --model is named first, with the known providers', async () => {
    const r = await run(['run', SESSION, '--provider', 'nope']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^compactor: run: unknown provider "nope" \(known: offline, openai, .*\)\n$/);
    // A known provider without a model still asks for the model.
    const known = await run(['run', SESSION, '--provider', 'openai']);
    expect(known).toEqual({
      code: 2,
      out: '',
      err: 'compactor: run: --model is required for provider "openai"\n',
    });
  });
});
