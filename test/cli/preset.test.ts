import { describe, it, expect, afterAll } from '@jest/globals';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentSession, canonicalFile, cli, workDir } from '#support/cli-sessions.js';

const dir = workDir('preset');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
canonicalFile(dir, 'session.json', agentSession());
const LIMITS = ['--capacity', '32000', '--reserved-output', '4000'];

const project = async (args: string[], cwd = dir) => {
  const r = await cli(['project', 'session.json', ...LIMITS, '--json', ...args], { cwd });
  expect(r.code).toBe(0);
  const { file: _file, ...report } = JSON.parse(r.out) as {
    file: string;
    clearedResults: number;
    reason: string;
  };
  return report;
};

describe('--preset and config "preset": defaults chosen on measured data, VT Code\'s rules kept reachable', () => {
  it("C1: the defaults (preset compactor) keep every tool result; --preset vtcode clears with VT Code's rules", async () => {
    const plain = await project([]);
    expect(plain.clearedResults).toBe(0);
    expect(plain.reason).toMatch(/clearing off/);
    expect(await project(['--preset', 'compactor'])).toEqual(plain);
    const seed = await project(['--preset', 'vtcode']);
    expect(seed.clearedResults).toBeGreaterThan(0);
  });

  it('C1: config "preset": "vtcode" is the same as the flag, and the flag wins over the config', async () => {
    const cfgDir = workDir('preset-config', { encoding: 'chars', preset: 'vtcode' });
    try {
      canonicalFile(cfgDir, 'session.json', agentSession());
      const fromConfig = await project([], cfgDir);
      expect(fromConfig).toEqual(await project(['--preset', 'vtcode']));
      expect((await project(['--preset', 'compactor'], cfgDir)).clearedResults).toBe(0);
    } finally {
      rmSync(cfgDir, { recursive: true, force: true });
    }
  });

  it('an unknown preset is one line naming the flag or the config field, exit 2', async () => {
    const bad = await cli(['project', 'session.json', '--preset', 'nope'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toMatch(/--preset/);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ preset: 'vt-code' }));
    const cfg = await cli(['project', 'session.json', '--config', join(dir, 'bad.json')], { cwd: dir });
    expect(cfg.code).toBe(2);
    expect(cfg.err.trim().split('\n')).toHaveLength(1);
    expect(cfg.err).toMatch(/preset/);
  });

  it('H5: --compaction-wait-ratio outside (0, 1) is one line naming the flag, exit 2; in range it is accepted with --compaction-wait-max', async () => {
    for (const bad of ['1', '0', '1.5']) {
      const r = await cli(['project', 'session.json', '--compaction-wait-ratio', bad], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/--compaction-wait-ratio/);
    }
    const max = await cli(['project', 'session.json', '--compaction-wait-max', '-5'], { cwd: dir });
    expect(max.code).toBe(2);
    expect(max.err).toMatch(/--compaction-wait-max/);
    expect(
      (await project(['--compaction-wait-ratio', '0.5', '--compaction-wait-max', '4000'])).clearedResults,
    ).toBe(0);
    expect((await project(['--no-compaction-wait-by-cost'])).clearedResults).toBe(0);
    expect((await project(['--compaction-wait-by-cost'])).clearedResults).toBe(0);
  });

  it('H5: --compaction-wait-by-cost with --no-compaction-wait-by-cost is one line naming both, exit 2, nothing written', async () => {
    for (const command of ['project', 'run', 'compact']) {
      const r = await cli(
        [
          command,
          'session.json',
          '--compaction-wait-by-cost',
          '--no-compaction-wait-by-cost',
          '--out',
          'next.json',
        ],
        { cwd: dir },
      );
      expect(r.code).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(
        new RegExp(`^compactor: ${command}: --compaction-wait-by-cost and --no-compaction-wait-by-cost`),
      );
      expect(existsSync(join(dir, 'next.json'))).toBe(false);
    }
  });

  it('H5: the help names both forms of the wait by expected cost in plain words', async () => {
    for (const command of ['project', 'run', 'compact']) {
      const r = await cli([command, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/--compaction-wait-by-cost +wait only where the expected cost says waiting pays/);
      expect(r.out).toMatch(
        /--no-compaction-wait-by-cost\n +wait whatever the expected cost \(the default\)/,
      );
    }
  });
});
