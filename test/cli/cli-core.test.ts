import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commands } from '#src/cli/commands/index.js';
import { runCli } from '#support/cli.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'compactor-cli-'));
}

describe('CLI dispatcher', () => {
  it('--version prints the package version', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('--help lists every registered command with a summary', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const name of Object.keys(commands)) expect(r.out).toMatch(new RegExp(`^  ${name}\\s+\\S`, 'm'));
  });

  it.each(Object.keys(commands))('%s --help prints a usage line and mentions --json', async (name) => {
    const r = await runCli([name, '--help']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/usage/i);
    expect(r.out).toContain(`compactor ${name}`);
    expect(r.out).toContain('--json');
  });

  it('D3: an unknown command or flag is a one-line error with exit 2', async () => {
    const a = await runCli(['frobnicate']);
    expect(a.code).toBe(2);
    expect(a.err).toBe("compactor: unknown command 'frobnicate' (see compactor --help)\n");
    for (const name of ['constructor', '__proto__', 'toString']) {
      const r = await runCli([name]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`compactor: unknown command '${name}' (see compactor --help)\n`);
    }
    const proto = await runCli(['run', 'x.json', '--model', 'constructor']);
    expect(proto.err).not.toMatch(/argument missing/);
    const b = await runCli(['plan', '--bogus']);
    expect(b.code).toBe(2);
    expect(b.err.trimEnd().split('\n')).toHaveLength(1);
    expect(b.err).toContain('--bogus');
  });
});

describe('compactor.config.json', () => {
  it('is optional; values apply and flags override them', async () => {
    const dir = tempDir();
    expect((await runCli(['plan', '--json'], { cwd: dir })).code).toBe(0);
    writeFileSync(
      join(dir, 'compactor.config.json'),
      JSON.stringify({ limits: { capacity: 32000, reservedOutput: 4000, prefixTokens: 2000 } }),
    );
    const fromConfig = JSON.parse((await runCli(['plan', '--json'], { cwd: dir })).out);
    expect(fromConfig.capacity).toBe(32000);
    expect(fromConfig.localTrigger).toBe(15600);
    const overridden = JSON.parse(
      (await runCli(['plan', '--json', '--capacity', '64000'], { cwd: dir })).out,
    );
    expect(overridden.capacity).toBe(64000);
  });

  it('D3: invalid JSON, wrong types and unknown keys name the file and field, exit 2', async () => {
    const dir = tempDir();
    const file = join(dir, 'compactor.config.json');
    const cases: Array<[string, RegExp]> = [
      ['{ "limits": ', /invalid JSON/],
      [JSON.stringify({ limits: { capacity: 'big' } }), /limits\.capacity/],
      [JSON.stringify({ toolResultClearing: { keepToolUse: 2 } }), /toolResultClearing.*keepToolUse/],
      [JSON.stringify({ provider: { apiKeyEnv: 'not a name' } }), /provider\.apiKeyEnv/],
    ];
    for (const [text, expected] of cases) {
      writeFileSync(file, text);
      const r = await runCli(['plan', '--json'], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.trimEnd().split('\n')).toHaveLength(1);
      expect(r.err).toContain(file);
      expect(r.err).toMatch(expected);
    }
  });

  it('D3: an explicit --config that does not exist is an error', async () => {
    const r = await runCli(['plan', '--config', '/nonexistent/compactor.json']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /\/nonexistent\/compactor\.json: cannot read config file: no such file or directory \(ENOENT\)/,
    );
  });
});
