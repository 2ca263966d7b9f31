import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/counters.js';
import { runCli } from '#support/cli.js';
import { fixture } from '#support/paths.js';
import { expectOneLineError, fuzzParams, leftovers } from '#support/fuzz.js';

/**
 * Fuzz of the CLI's flags: random commands with random flag sets and
 * values, run in-process (the bin's code path) in a scratch directory. Each either works or
 * exits 2 with one line and leaves no output behind.
 */

afterAll(freeEncoders);

const SHARED_LIMITS = [
  '--capacity',
  '--session-ceiling',
  '--reserved-output',
  '--trigger',
  '--prefix-tokens',
];
const CLEARING = [
  '--keep-tool-uses',
  '--keep-recent-batches',
  '--evidence-ratio',
  '--clear-at-least',
  '--compaction-wait-ratio',
  '--compaction-wait-max',
];
const CLEARING_SWITCHES = [
  '--no-clear-inputs',
  '--no-clearing',
  '--compaction-waits-for-cache-break',
  '--compaction-wait-by-cost',
  '--no-compaction-wait-by-cost',
];
const SELECT = ['--from', '--session', '--out', '--to', '--config'];
const TURN = [
  ...SHARED_LIMITS,
  ...CLEARING,
  ...SELECT,
  '--threshold',
  '--session-dir',
  '--wait',
  '--timeout',
  '--retries',
  '--retry-budget',
  '--model',
];
const TURN_SWITCHES = [...CLEARING_SWITCHES, '--hierarchical', '--new', '--json'];

/** Flags that take a value and switches, per command (network and inspector flags left out). */
const COMMANDS: Record<string, { valued: string[]; switches: string[] }> = {
  run: { valued: [...TURN, '--provider', '--chart'], switches: TURN_SWITCHES },
  compact: { valued: [...TURN, '--provider', '--instructions'], switches: TURN_SWITCHES },
  project: { valued: [...SHARED_LIMITS, ...CLEARING, ...SELECT], switches: [...CLEARING_SWITCHES, '--json'] },
  plan: { valued: [...SHARED_LIMITS, '--evidence-ratio', '--config'], switches: ['--json'] },
  stats: { valued: ['--from', '--session', '--config', '--chart', '--capacity'], switches: ['--json'] },
  import: { valued: SELECT, switches: ['--json'] },
  restore: { valued: ['--at', '--to', '--out', '--config'], switches: ['--json'] },
};

const INPUTS = ['in.json', 'good-config.json', 'bad-config.json'];
const value = fc.oneof(
  fc.constantFrom('0', '1', '2', '-1', '0.5', '1.5', '1e3', '32000', '200000', '99999999999999999999'),
  fc.constantFrom('', 'abc', 'NaN', 'offline', 'bogus', 'canonical', 'openai-chat', 'anthropic', '0', '-'),
  fc.constantFrom('out.json', 'out.svg', 'sess', 'missing/dir/out.json', ...INPUTS, '.', '/', '../x'),
  fc.string({ maxLength: 12 }),
);

const invocation = fc.constantFrom(...Object.keys(COMMANDS)).chain((cmd) => {
  const { valued, switches } = COMMANDS[cmd];
  return fc.tuple(
    fc.constant(cmd),
    fc.constantFrom(['in.json'], ['in.json'], [], ['missing.json'], ['in.json', 'in.json']),
    fc.uniqueArray(fc.tuple(fc.constantFrom(...valued), value), { maxLength: 4, selector: ([f]) => f }),
    fc.subarray(switches, { maxLength: Math.min(2, switches.length) }),
  );
});

const tmp = mkdtempSync(join(tmpdir(), 'compactor-fuzz-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function scratch(): string {
  const dir = mkdtempSync(join(tmp, 'case-'));
  copyFileSync(fixture('openai-chat.json'), join(dir, 'in.json'));
  writeFileSync(join(dir, 'good-config.json'), JSON.stringify({ limits: { capacity: 32_000 } }));
  writeFileSync(join(dir, 'bad-config.json'), '{"limits": {"capacity": "lots"');
  return dir;
}

describe('CLI flags under random combinations (D3)', () => {
  it('D3: any flag set exits 0, or 2 with one line and no output written', async () => {
    await fc.assert(
      fc.asyncProperty(invocation, async ([cmd, positionals, valued, switches]) => {
        const dir = scratch();
        const args = [cmd, ...positionals, ...valued.flatMap(([f, v]) => [`${f}=${v}`]), ...switches];
        const r = await runCli(args, { cwd: dir });
        const where = `compactor ${args.join(' ')} → ${r.code}: ${r.err}`;
        expect([where, [0, 2].includes(r.code)]).toEqual([where, true]);
        if (r.code === 2) {
          expectOneLineError(r.err);
          expect([where, leftovers(dir, INPUTS)]).toEqual([where, []]);
        }
      }),
      fuzzParams(40),
    );
  });
});
