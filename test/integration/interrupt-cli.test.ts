import { afterAll, afterEach, describe, expect, it, jest } from '@jest/globals';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '#src/cli/main.js';
import { Interrupted } from '#src/cli/interrupt.js';
import { startCli, stopRunningClis } from '#support/compiled-cli.js';
import { deferred } from '#support/deferred.js';
import { useFakeProviders } from '#support/fake-providers.js';
import { agentSession, canonicalFile, filesUnder, templateSummary, workDir } from '#support/cli-sessions.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

const dir = workDir('interrupt');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// A run still held at its provider request after a failed test is ended there.
afterEach(stopRunningClis);
canonicalFile(dir, 'first.json', agentSession(30));
// The same session, grown since: a second run continues it and compacts again.
canonicalFile(dir, 'grown.json', agentSession(60));
const fakes = useFakeProviders({ window: 8_000, summaryText: templateSummary() }); // every run's --capacity
const route = () => ['--provider', 'openai-compatible', '--base-url', fakes.oai.url, '--model', 'm'];
const env = { PATH: process.env.PATH };

/** Holds the next provider request; resolves `held` when it arrived, `closed` when its connection closed. */
function holdNext() {
  const held = deferred<void>();
  const closed = deferred<void>();
  fakes.oai.script.push({
    kind: 'hold',
    until: new Promise(() => undefined), // never answered: only an abort ends it
    onHeld: () => held.resolve(),
    onClosed: () => closed.resolve(),
  });
  return { held: held.promise, closed: closed.promise };
}

describe('Ctrl-C and SIGTERM stop a run cleanly (R2)', () => {
  it('R2: SIGTERM during the summary request exits 143 with one line; the session directory is exactly as before the turn', async () => {
    const first = startCli(['run', 'first.json', ...route(), '--capacity', '8000', '--session-dir', 's'], {
      cwd: dir,
      env,
    });
    expect((await first.done).code).toBe(0);
    const before = filesUnder(join(dir, 's'));
    expect(before.map((f) => f.path)).toContain(join(dir, 's', 'snapshots', 'turn.json'));

    const hold = holdNext();
    const child = startCli(['run', 'grown.json', ...route(), '--capacity', '8000', '--session-dir', 's'], {
      cwd: dir,
      env,
    });
    await hold.held;
    child.child.kill('SIGTERM');
    const r = await child.done;
    expect(r.code).toBe(143);
    expect(r.err).toBe('compactor: interrupted by SIGTERM: stopped; nothing of this run was recorded\n');
    expect(r.out).toBe('');
    await hold.closed;
    expect(filesUnder(join(dir, 's'))).toEqual(before);
  });

  it('R2: SIGINT (Ctrl-C) stops compact the same way: exit 130, one line', async () => {
    const hold = holdNext();
    const child = startCli(['compact', 'first.json', ...route(), '--capacity', '8000'], { cwd: dir, env });
    await hold.held;
    child.child.kill('SIGINT');
    const r = await child.done;
    expect(r.code).toBe(130);
    expect(r.err).toBe('compactor: interrupted by SIGINT: stopped; nothing of this run was recorded\n');
  });

  it('R2: the abort reaches the provider request: the server sees the connection close while the CLI is still running', async () => {
    const hold = holdNext();
    const controller = new AbortController();
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    const err: string[] = [];
    const stderr = new Writable({
      write: (c: Buffer, _e, cb) => (err.push(c.toString()), cb()),
    });
    const running = main(['run', 'grown.json', ...route(), '--capacity', '8000'], {
      stdout: sink,
      stderr,
      cwd: dir,
      env: {},
      signal: controller.signal,
    });
    await hold.held;
    controller.abort(new Interrupted('SIGTERM'));
    await hold.closed;
    expect(await running).toBe(143);
    expect(err.join('')).toBe(
      'compactor: interrupted by SIGTERM: stopped; nothing of this run was recorded\n',
    );
  });
});
