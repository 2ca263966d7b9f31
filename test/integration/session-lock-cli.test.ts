import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSessionStore } from '#src/store/index.js';
import { runCompiledCli, startCli, stopRunningClis } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

// A writer still waiting for the lock after a failed test is ended there.
afterEach(stopRunningClis);

const SESSION = join(import.meta.dirname, '../../examples/sessions/django__django-16560.traj.json');
/** A fresh working directory whose config selects the chars estimator: these tests are about the lock, not token counts. */
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-lock-'));
  writeFileSync(join(dir, 'compactor.config.json'), JSON.stringify({ encoding: 'chars' }));
  return dir;
};

describe('one writer per session directory (R2)', () => {
  it('R2: a second writer fails at once with one line naming the holder, exit 2', async () => {
    const cwd = fresh();
    const holder = openSessionStore(join(cwd, 's'));
    try {
      const r = await runCompiledCli(['run', SESSION, '--session-dir', 's'], { cwd });
      expect(r.code).toBe(2);
      expect(r.err).toMatch(
        new RegExp(
          `^compactor: .*session directory is in use by process ${process.pid} on ${hostname()} .*--wait SECONDS\\n$`,
        ),
      );
    } finally {
      holder.close();
    }
    expect(openSessionStore(join(cwd, 's'), { create: false }).events()).toEqual([]);
  });

  it('R2: with --wait the second writer waits, says so, and goes on when the first finishes', async () => {
    const cwd = fresh();
    const holder = openSessionStore(join(cwd, 's'));
    const waiting = startCli(['run', SESSION, '--session-dir', 's', '--wait', '600', '--capacity', '8000'], {
      cwd,
    });
    await waiting.waitFor(/waiting for .* in use by process/);
    holder.close();
    const r = await waiting.done;
    expect(r.err).toMatch(/^compactor: waiting for .*s: in use by process \d+ .*\(up to 600 s\)\n/);
    expect(r.code).toBe(0);
    expect(openSessionStore(join(cwd, 's'), { create: false }).listBoundaries()).toHaveLength(1);
  });

  it('R2: two runs started together on one directory leave one whole session, never a forked log', async () => {
    for (let pair = 0; pair < 2; pair++) {
      const cwd = fresh();
      const args = ['run', SESSION, '--session-dir', 's', '--capacity', '8000'];
      const [a, b] = await Promise.all([runCompiledCli(args, { cwd }), runCompiledCli(args, { cwd })]);
      // Either both ran, one after the other (the second continued the first's session), or
      // the second found the first still writing and stopped at once.
      expect([a.code, b.code]).toContain(0);
      for (const r of [a, b])
        if (r.code !== 0) {
          expect(r.code).toBe(2);
          expect(r.err).toMatch(/^compactor: .*in use by process \d+.*\n$/);
        }
      const store = openSessionStore(join(cwd, 's'), { create: false });
      expect(store.warnings()).toEqual([]);
      expect(store.events().filter((e) => e.type === 'message.appended')).toHaveLength(292);
      expect(store.listBoundaries()).toHaveLength(1);
    }
  });
});
