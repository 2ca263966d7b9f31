import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deferred } from '#support/deferred.js';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { FakeServer } from '#support/fake-http.js';
import { runCompiledCli, startCli, stopRunningClis } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/** `compactor serve` as a process (needs `npm run build`). */
const dirs: string[] = [];
const upstreams: FakeServer[] = [];
afterEach(async () => {
  // A serve process left by a failed test is ended before its upstream goes.
  await stopRunningClis();
  for (const u of upstreams.splice(0)) await u.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'compactor-serve-cli-'));
  dirs.push(d);
  return d;
}

const READY = /compactor: serving on (http:\/\/127\.0\.0\.1:\d+)\n/;

describe('compactor serve (process)', () => {
  it('prints the one ready line; on SIGTERM the request in flight is answered, then the process exits 0', async () => {
    const upstream = await startFakeAgentUpstream({ window: 16_000 });
    upstreams.push(upstream);
    const release = deferred<void>();
    const held = deferred<void>();
    upstream.script.push({ kind: 'hold', until: release.promise, onHeld: () => held.resolve() });
    const cwd = tempDir();
    const cli = startCli(
      [
        'serve',
        '--port',
        '0',
        '--capacity',
        '16000',
        '--openai-upstream',
        upstream.url,
        '--data-dir',
        'sessions',
      ],
      { cwd },
    );
    await cli.waitFor(READY);
    const url = READY.exec(cli.err())![1];
    expect(cli.err()).toBe(`compactor: serving on ${url}\n`);
    const answer = fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await held.promise;
    cli.child.kill('SIGTERM');
    // The process has the signal while the upstream still holds the request: it waits for it.
    await cli.waitFor(/compactor: stopping: no new requests; finishing those in flight\n/);
    expect(cli.err()).not.toContain('stopped serving');
    release.resolve();
    const res = await answer;
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe('Step 0: reading the next file.');
    const done = await cli.done;
    expect(done.code).toBe(0);
    expect(done.err).toContain('compactor: stopped serving');
  });

  it('D3: takes its settings from config "serve"; a bad key or a missing token variable is one line and exit 2', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'compactor.config.json'), JSON.stringify({ serve: { port: 'eighty' } }));
    const bad = await runCompiledCli(['serve'], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^compactor: .*compactor\.config\.json: serve\.port: .*\n$/);
    writeFileSync(
      join(cwd, 'compactor.config.json'),
      JSON.stringify({ serve: { authTokenEnv: 'SERVE_TOKEN' } }),
    );
    const noToken = await runCompiledCli(['serve', '--port', '0'], { cwd });
    expect(noToken.code).toBe(2);
    expect(noToken.err).toBe(
      'compactor: serve: --auth-token-env: the environment variable SERVE_TOKEN is not set\n',
    );
    const badFlag = await runCompiledCli(['serve', '--port', '70000'], { cwd });
    expect(badFlag.code).toBe(2);
    expect(badFlag.err).toMatch(/^compactor: serve: --port: expected a port/);
  });
});
