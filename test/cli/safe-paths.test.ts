import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { agentSession, canonicalFile, cli, workDir } from '#support/cli-sessions.js';

const dir = workDir('paths');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
canonicalFile(dir, 'in.json', agentSession(12, 400));
const original = readFileSync(join(dir, 'in.json'), 'utf8');
symlinkSync(join(dir, 'in.json'), join(dir, 'link.json'));
const oneLineExit2 = (r: { code: number; err: string }) => {
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^compactor: [^\n]+\n$/);
};

describe('safe paths (D3, R2)', () => {
  it.each([
    [['run', 'in.json', '--inspect=in.json']],
    [['run', 'in.json', '--out', 'in.json']],
    [['compact', 'in.json', '--out', 'link.json']],
    [['import', 'in.json', '--out', 'in.json']],
    [['import', 'in.json', '--out', 'link.json']],
    [['import', 'link.json', '--out', 'in.json']],
  ])(
    'D3: an output that is an input (or a symbolic link to it) is refused before any work: %j',
    async (args) => {
      oneLineExit2(await cli(args, { cwd: dir }));
      expect(readFileSync(join(dir, 'in.json'), 'utf8')).toBe(original);
    },
  );

  it('R2: an output onto a session directory’s own files is refused, and nothing is recorded', async () => {
    for (const out of ['s/events.jsonl', 's/lock', 's/artifacts/x.json']) {
      const r = await cli(['run', 'in.json', '--capacity', '4000', '--session-dir', 's', '--out', out], {
        cwd: dir,
      });
      oneLineExit2(r);
      expect(r.err).toMatch(/session directory's own file|no such directory/);
    }
    expect(existsSync(join(dir, 's', 'events.jsonl'))).toBe(false);
  });

  it('D3: --out into a missing directory fails before the session directory is touched', async () => {
    const r = await cli(
      ['run', 'in.json', '--capacity', '4000', '--session-dir', 's2', '--out', 'no/such/x.json'],
      {
        cwd: dir,
      },
    );
    oneLineExit2(r);
    expect(r.err).toMatch(/no such directory/);
    expect(existsSync(join(dir, 's2'))).toBe(false);
  });

  it('D3: inputs are read only from regular files: devices, FIFOs and /proc fail at once with one line', async () => {
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    for (const args of [
      ['plan', '--config', '/dev/urandom'],
      ['stats', '/dev/zero'],
      ['import', 'fifo'],
      ['import', '/proc/self/status'],
      ['run', 'in.json', '--config', join(dir, 'fifo')],
    ]) {
      const r = await cli(args, { cwd: dir });
      oneLineExit2(r);
      expect(r.err).toMatch(/not a regular file/);
    }
  });

  it('D3: file-system errors are one line naming the path and the cause, exit 2', async () => {
    const r = await cli(['import', 'in.json', '--out', 'in.json/x'], { cwd: dir });
    oneLineExit2(r);
    expect(r.err).toContain('in.json');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
