import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '#support/cli.js';
import { msg } from '#src/messages/message.js';
import { readStep, TASK } from '#support/agent-loop.js';
import { canonicalFile } from '#support/cli-sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-clear-first-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// An agent loop of 4k-token reads in a 12k window: a summary pass would buy about one step.
const messages = [msg.user(TASK), ...Array.from({ length: 6 }, (_, i) => readStep(i + 1, 4_000)).flat()];
canonicalFile(dir, 'loop.json', messages);

const run = async (args: string[]) => {
  const r = await runCli(['run', 'loop.json', '--capacity', '12000', '--json', ...args], { cwd: dir });
  return { ...r, json: r.code === 0 ? (JSON.parse(r.out) as Record<string, unknown>) : null };
};

describe('clearing instead of a summary pass, from the CLI (H2)', () => {
  it('H2: by default old tool results are cleared instead of a summary call; --clear-when-pass-buys-fewer 0 and the config key compact instead', async () => {
    const byDefault = await run([]);
    expect(byDefault.json).toMatchObject({ decision: 'cleared', summaryCalls: 0 });
    const off = await run(['--clear-when-pass-buys-fewer', '0']);
    expect(off.json).toMatchObject({ decision: 'compacted', summaryCalls: 1 });
    writeFileSync(
      join(dir, 'compactor.config.json'),
      JSON.stringify({ toolResultClearing: { clearWhenPassBuysFewerTurns: 0 } }),
    );
    try {
      expect((await run([])).json).toMatchObject({ decision: 'compacted' });
    } finally {
      rmSync(join(dir, 'compactor.config.json'));
    }
  });

  it('D3: a negative --clear-when-pass-buys-fewer is one plain line, exit 2', async () => {
    const r = await run(['--clear-when-pass-buys-fewer', '-3']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'compactor: run: --clear-when-pass-buys-fewer: expected a whole number, 0 or more (got "-3")\n',
    );
  });
});
