import { describe, it, expect, afterAll } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '#support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], cwd = dir) => runCli(args, { cwd });

describe('compactor plan', () => {
  it('B3: --json prints every budget; 32,000/4,000/2,000 → local trigger 15,600', async () => {
    const r = await run([
      'plan',
      '--capacity',
      '32000',
      '--reserved-output',
      '4000',
      '--prefix-tokens',
      '2000',
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      capacity: 32_000,
      historyBudget: 26_000,
      localTrigger: 15_600,
      evidenceBudget: 7_800,
      compactionThreshold: 21_000,
      summaryInputBudget: 25_488,
      continuityTailTokens: 5_120,
    });
  });

  it('B1/B3: unknown capacity prints null and keeps the configured trigger', async () => {
    const r = await run(['plan', '--trigger', '12000', '--json']);
    expect(JSON.parse(r.out)).toMatchObject({
      capacity: null,
      historyBudget: null,
      localTrigger: 12_000,
      evidenceBudget: 6_000,
    });
  });

  it('B1: --session-ceiling intersects the capacity; 0 means automatic', async () => {
    const capped = JSON.parse(
      (await run(['plan', '--capacity', '128000', '--session-ceiling', '64000', '--json'])).out,
    );
    expect(capped.capacity).toBe(64_000);
    const auto = JSON.parse(
      (await run(['plan', '--capacity', '128000', '--session-ceiling', '0', '--json'])).out,
    );
    expect(auto.capacity).toBe(128_000);
  });

  it('B3: defaults come from the config file; flags override them', async () => {
    const cwd = mkdtempSync(join(dir, 'cfg-'));
    writeFileSync(
      join(cwd, 'compactor.config.json'),
      JSON.stringify({
        limits: { capacity: 32_000, reservedOutput: 4_000, prefixTokens: 2_000 },
        toolResultClearing: { triggerTokens: 10_000 },
        compaction: { retainRatio: 0.5 },
      }),
    );
    const fromConfig = JSON.parse((await run(['plan', '--json'], cwd)).out);
    expect(fromConfig).toMatchObject({
      capacity: 32_000,
      localTrigger: 10_000,
      continuityTailTokens: 16_000,
    });
    const overridden = JSON.parse(
      (await run(['plan', '--json', '--trigger', '40000', '--capacity', '64000'], cwd)).out,
    );
    expect(overridden).toMatchObject({ capacity: 64_000, localTrigger: 34_800 });
  });

  it('B2: the human table shows each budget with its formula', async () => {
    const r = await run([
      'plan',
      '--capacity',
      '32000',
      '--reserved-output',
      '4000',
      '--prefix-tokens',
      '2000',
    ]);
    expect(r.out).toMatch(
      /^local trigger\s+15,600\s+the configured trigger, at most 3\/5 of the history budget$/m,
    );
    expect(r.out).toMatch(/^history budget\s+26,000/m);
    expect((await run(['plan'])).out).toMatch(/^capacity\s+unknown/m);
  });

  it('B1: a reserved output that uses up the capacity is warned about in plain words (text and --json)', async () => {
    const limits = ['plan', '--capacity', '1000', '--reserved-output', '2000'];
    const text = await run(limits);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^history budget\s+0/m);
    expect(text.out).toContain(
      'warning: the reserved output (2,000) and prefix (0) leave no room for history in a capacity of 1,000; lower --reserved-output or --prefix-tokens, or raise --capacity\n',
    );
    const json = JSON.parse((await run([...limits, '--json'])).out) as {
      historyBudget: number;
      warnings: string[];
    };
    expect(json.historyBudget).toBe(0);
    expect(json.warnings).toEqual([
      'the reserved output (2,000) and prefix (0) leave no room for history in a capacity of 1,000; lower --reserved-output or --prefix-tokens, or raise --capacity',
    ]);
    // Limits that leave room for history print no warning and no warnings field.
    const fine = await run(['plan', '--capacity', '32000', '--reserved-output', '4000']);
    expect(fine.out).not.toContain('warning');
    expect(JSON.parse((await run(['plan', '--capacity', '32000', '--json'])).out)).not.toHaveProperty(
      'warnings',
    );
  });

  it('D3: bad flags give one-line errors and exit 2', async () => {
    for (const args of [
      ['plan', '--capacity', 'lots'],
      ['plan', '--trigger', '0'],
      ['plan', '--reserved-output=-4'],
      ['plan', '--bogus'],
      ['plan', 'extra'],
    ]) {
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.trimEnd().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/^compactor: /);
    }
    expect((await run(['plan', '--capacity', 'lots'])).err).toMatch(/--capacity/);
  });
});
