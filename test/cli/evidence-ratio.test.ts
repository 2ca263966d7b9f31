import { describe, it, expect, afterAll } from '@jest/globals';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '#src/messages/message.js';
import { agentSession, canonicalFile, cli, workDir } from '#support/cli-sessions.js';

// The evidence window matters only where clearing runs: the VT Code preset.
const dir = workDir('evidence-ratio', { encoding: 'chars', preset: 'vtcode' });
afterAll(() => rmSync(dir, { recursive: true, force: true }));
canonicalFile(dir, 'session.json', agentSession());
const run = (args: string[], cwd = dir) => cli(args, { cwd });

const SPEC_LIMITS = ['--capacity', '32000', '--reserved-output', '4000', '--prefix-tokens', '2000'];
const json = async (args: string[], cwd = dir) =>
  JSON.parse((await run(args, cwd)).out) as Record<string, unknown>;

/** Tool results of a written canonical file that were not replaced by a short stub. */
function keptResults(file: string): number {
  const { messages } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { messages: Message[] };
  return messages.filter((m) => m.role === 'tool' && !String(m.content).includes('"cleared"')).length;
}

describe('--evidence-ratio and toolResultClearing.evidenceWindowRatio (opt-in B4)', () => {
  it('B4: plan --json without the ratio, or with 0.5, is byte-for-byte the default output', async () => {
    const plain = await run(['plan', ...SPEC_LIMITS, '--json']);
    const half = await run(['plan', ...SPEC_LIMITS, '--json', '--evidence-ratio', '0.5']);
    expect(half.out).toBe(plain.out);
    expect(JSON.parse(plain.out)).not.toHaveProperty('evidenceWindowRatio');
    expect(JSON.parse(plain.out)).toMatchObject({ localTrigger: 15_600, evidenceBudget: 7_800 });
    const table = await run(['plan', ...SPEC_LIMITS, '--evidence-ratio', '0.5']);
    expect(table.out).toMatch(/evidence budget +7,800 {2}half the local trigger$/m);
  });

  it('B4: plan --evidence-ratio 0.9 → floor(15,600 × 0.9) = 14,040, the ratio added to --json', async () => {
    expect(await json(['plan', ...SPEC_LIMITS, '--json', '--evidence-ratio', '0.9'])).toEqual({
      capacity: 32_000,
      historyBudget: 26_000,
      localTrigger: 15_600,
      evidenceBudget: 14_040,
      compactionThreshold: 21_000,
      summaryInputBudget: 25_488,
      continuityTailTokens: 5_120,
      evidenceWindowRatio: 0.9,
    });
    const table = await run(['plan', ...SPEC_LIMITS, '--evidence-ratio', '1']);
    expect(table.out).toMatch(
      /evidence budget +15,600 {2}local trigger × 1 \(evidence window ratio, opted in/,
    );
  });

  it.each(['plan', 'project', 'run', 'compact'])(
    'B4: %s rejects --evidence-ratio 0, above 1 and non-numbers with one line naming the flag',
    async (command) => {
      const file = command === 'plan' ? [] : ['session.json'];
      for (const [value, why] of [
        ['0', 'expected a number above 0 and at most 1'],
        ['0.0', 'expected a number above 0 and at most 1'],
        ['1.5', 'expected a number between 0 and 1'],
        ['x', 'expected a number between 0 and 1'],
      ]) {
        const r = await run([command, ...file, '--evidence-ratio', value]);
        expect(r.code).toBe(2);
        expect(r.out).toBe('');
        expect(r.err).toBe(`compactor: ${command}: --evidence-ratio: ${why} (got "${value}")\n`);
      }
    },
  );

  it('B4: the config field sets the ratio; the flag wins; an invalid value names file and field', async () => {
    const cfg = workDir('evidence-ratio-cfg', {
      limits: { capacity: 32_000, reservedOutput: 4_000, prefixTokens: 2_000 },
      toolResultClearing: { evidenceWindowRatio: 0.75 },
    });
    try {
      expect(await json(['plan', '--json'], cfg)).toMatchObject({
        evidenceBudget: 11_700,
        evidenceWindowRatio: 0.75,
      });
      expect(await json(['plan', '--json', '--evidence-ratio', '0.9'], cfg)).toMatchObject({
        evidenceBudget: 14_040,
      });
      for (const bad of [0, 1.5, '0.9']) {
        writeFileSync(
          join(cfg, 'compactor.config.json'),
          JSON.stringify({ toolResultClearing: { evidenceWindowRatio: bad } }),
        );
        const r = await run(['plan'], cfg);
        expect(r.code).toBe(2);
        expect(r.err).toContain('compactor.config.json: toolResultClearing.evidenceWindowRatio: ');
      }
    } finally {
      rmSync(cfg, { recursive: true, force: true });
    }
  });

  it('C2: project --evidence-ratio widens the evidence window of the projection', async () => {
    const limits = ['--capacity', '1000000', '--trigger', '6000', '--json'];
    const half = await json(['project', 'session.json', ...limits]);
    const wide = await json(['project', 'session.json', ...limits, '--evidence-ratio', '1']);
    expect(half).toMatchObject({ localTrigger: 6_000, evidenceBudget: 3_000 });
    expect(wide).toMatchObject({ localTrigger: 6_000, evidenceBudget: 6_000 });
    expect(wide.evidenceBatches as number).toBeGreaterThan(half.evidenceBatches as number);
    expect(wide.clearedResults as number).toBeLessThan(half.clearedResults as number);
  });

  it('C2: run --evidence-ratio keeps more results in the next request', async () => {
    const limits = ['--capacity', '1000000', '--trigger', '6000', '--to', 'canonical'];
    const half = await run(['run', 'session.json', ...limits, '--out', 'half.json']);
    const wide = await run(['run', 'session.json', ...limits, '--out', 'wide.json', '--evidence-ratio', '1']);
    expect([half.code, wide.code]).toEqual([0, 0]);
    expect(keptResults('wide.json')).toBeGreaterThan(keptResults('half.json'));
  });

  it('B4: compact accepts --evidence-ratio (its summary covers the full history either way)', async () => {
    const r = await run([
      'compact',
      'session.json',
      '--capacity',
      '8000',
      '--evidence-ratio',
      '0.9',
      '--json',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });
});
