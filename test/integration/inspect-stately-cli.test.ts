import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startFakeOpenAI } from '#support/fake-openai.js';
import type { FakeServer } from '#support/fake-http.js';
import { startCli, stopRunningClis } from '#support/compiled-cli.js';
import { agentSession, canonicalFile, cli, templateSummary, workDir } from '#support/cli-sessions.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/**
 * `--inspect=stately` through the compiled CLI: the address to open is
 * printed, a viewer that connects gets the run's inspection events, and without one the run
 * goes on after the bounded wait and says so. Nothing here waits on the clock: the tests wait
 * for printed lines, for the connection and for the exit.
 */

const dir = workDir('stately');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// A run still waiting for its viewer after a failed test is ended there.
afterEach(stopRunningClis);
canonicalFile(dir, 'session.json', agentSession(12));
const ADDRESS = /open (http:\/\/127\.0\.0\.1:(\d+)\/) to watch the run in the Stately inspector/;

describe('compactor run/compact --inspect=stately (compiled CLI)', () => {
  const KEY = 'sk-FAKE-stately-key-0123456789abcdef';
  let srv: FakeServer;
  beforeAll(async () => {
    srv = await startFakeOpenAI({ window: 8_000, summaryText: templateSummary() }); // the runs' --capacity
  });
  afterAll(() => srv.close());

  it('S4: prints the address; a viewer that connects gets the actors, events and snapshots of the run, with no key in them', async () => {
    const c = startCli(
      [
        ...['compact', 'session.json', '--provider', 'openai-compatible', '--model', 'local-model'],
        ...['--base-url', srv.url, '--api-key-env', 'FAKE_KEY', '--capacity', '8000'],
        // Waits for the connection, not for the clock: the viewer below connects.
        ...['--inspect=stately', '--inspect-port', '0', '--inspect-wait', '600'],
      ],
      { cwd: dir, env: { PATH: process.env.PATH, FAKE_KEY: KEY } },
    );
    await c.waitFor(ADDRESS);
    const [, page, port] = ADDRESS.exec(c.err()) ?? [];
    expect(c.err()).toContain('(waiting up to 600 s for it to connect)');
    // The page embeds the Stately inspector UI and forwards the relay's messages to it.
    expect(await (await fetch(page)).text()).toContain(
      '<iframe id="inspector" src="https://stately.ai/inspect">',
    );
    // Another web page may not connect: the relay checks the Origin header.
    const foreign = new WebSocket(`ws://127.0.0.1:${port}/`, { origin: 'https://elsewhere.example' });
    const [, refused] = (await once(foreign, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(refused.statusCode).toBe(401);

    const viewer = new WebSocket(`ws://127.0.0.1:${port}/`);
    const received: string[] = [];
    viewer.on('message', (data: Buffer) => received.push(data.toString()));
    const closed = once(viewer, 'close');
    const r = await c.done;
    await closed;
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^compactor: inspector connected$/m);
    expect(r.err).not.toMatch(/running without it/);
    expect(r.out).toMatch(/compacted/);

    const messages = received.map((m) => JSON.parse(m) as { type: string; name?: string; snapshot?: any });
    const types = new Set(messages.map((m) => m.type));
    expect([...types].sort()).toEqual(['@xstate.actor', '@xstate.event', '@xstate.snapshot']);
    // The compaction machine ran to its end, and the viewer saw it.
    expect(messages.some((m) => m.type === '@xstate.actor' && m.name === 'compaction')).toBe(true);
    expect(messages.some((m) => m.type === '@xstate.snapshot' && m.snapshot?.status === 'done')).toBe(true);
    // The key reached the provider, never the viewer; histories are reduced to counts.
    expect(srv.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
    for (const m of received) expect(m).not.toContain(KEY);
    expect(received.join('\n')).not.toContain('export const value0');
  });

  it('S4: nobody connects within --inspect-wait: the run goes on without the inspector, says so and exits 0', async () => {
    const r = await startCli(
      [
        'run',
        'session.json',
        '--capacity',
        '6000',
        '--inspect=stately',
        '--inspect-port',
        '0',
        '--inspect-wait',
        '1',
      ],
      { cwd: dir },
    ).done;
    expect(r.err).toMatch(ADDRESS);
    expect(r.err).toMatch(/^compactor: no inspector connected after 1 s; running without it$/m);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^inspection: stately$/m);
  });

  it('S4: a port that is taken, when asked for, is a one-line error (exit 2) before anything runs', async () => {
    const busy: Server = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await startCli(
        ['run', 'session.json', '--session-dir', 'busy', '--inspect=stately', '--inspect-port', String(port)],
        { cwd: dir },
      ).done;
      expect(r.code).toBe(2);
      expect(r.err).toBe(`compactor: run: --inspect-port: cannot listen on 127.0.0.1:${port} (EADDRINUSE)\n`);
    } finally {
      busy.close();
    }
  });
});

describe('--inspect-port and --inspect-wait are checked (exit 2, one line)', () => {
  it.each([
    [
      ['--inspect=stately', '--inspect-port', '70000'],
      /^compactor: run: --inspect-port: at most 65535 \(got "70000"\)\n$/,
    ],
    [
      ['--inspect=stately', '--inspect-port', 'http'],
      /^compactor: run: --inspect-port: expected a port number/,
    ],
    [
      ['--inspect=stately', '--inspect-wait', 'soon'],
      /^compactor: run: --inspect-wait: expected a number of seconds/,
    ],
    [
      ['--inspect=stately', '--inspect-wait', '7200'],
      /^compactor: run: --inspect-wait: at most 3600 seconds/,
    ],
    [['--inspect-port', '0'], /^compactor: run: --inspect-port needs --inspect=stately\n$/],
    [
      ['--inspect=jsonl', '--inspect-wait', '2'],
      /^compactor: run: --inspect-wait needs --inspect=stately\n$/,
    ],
  ])('%j', async (flags, error) => {
    const r = await cli(['run', 'session.json', ...flags], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(error);
    expect(r.out).toBe('');
  });

  it('config "inspect" is validated like the flags', async () => {
    writeFileSync(join(dir, 'bad-inspect.json'), JSON.stringify({ inspect: { port: 70000 } }));
    const r = await cli(
      ['run', 'session.json', '--config', join(dir, 'bad-inspect.json'), '--inspect=stately'],
      {
        cwd: dir,
      },
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^compactor: .*bad-inspect\.json: inspect\.port: .*\n$/);
  });
});
