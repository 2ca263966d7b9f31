import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { startCli, stopRunningClis } from '#support/compiled-cli.js';
import {
  RestateServer,
  restateServeArgs,
  startWorker,
  stopWorker,
  type Worker,
} from '#dev/restate/harness.js';
import { RESTATE_TEST_MS, restateSuite } from '#support/time-limits.js';
import { estimateBodyTokens } from '#dev/fakes/fake-window.js';

/**
 * `compactor serve --engine restate`: the proxy (the compiled CLI as a process, so
 * `npm run build` first) keeps each session in a `compactorSession` object of a real Restate
 * server (from npm, offline; one Node 24 worker serves the object), so a second proxy process
 * continues a session the first one compacted. Runs where the install
 * exists (`.ci/run` makes it and sets COMPACTOR_RESTATE_REQUIRED, so there a missing install fails).
 */

const { install, describeWithRestate } = restateSuite();
jest.setTimeout(RESTATE_TEST_MS);

const WINDOW = 16_000;
const SESSION = 'restart-me';

afterAll(() => freeEncoders());

/** One Anthropic tool step: a call and its ~1,500-token result. */
const step = (n: number) => [
  { role: 'assistant', content: [{ type: 'tool_use', id: `c${n}`, name: 'read_file', input: { n } }] },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: `c${n}`,
        content: `file ${n}: ${'lorem ipsum dolor '.repeat(300)}`,
      },
    ],
  },
];

describeWithRestate('compactor serve on Restate', () => {
  let restate: RestateServer;
  let worker: Worker;
  let upstream: FakeAgentUpstream;
  let cwd: string;

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'compactor-serve-restate-'));
    upstream = await startFakeAgentUpstream({ window: WINDOW });
    restate = new RestateServer(install!);
    await restate.start();
    // The worker writes the summaries, with its own route and key (the client's never reach
    // Restate), on Anthropic's API like the client, but another model.
    worker = await startWorker(install!, {
      WORKER_ROUTE: JSON.stringify({
        provider: 'anthropic',
        model: 'claude-haiku-4-5',
        baseUrl: upstream.url,
        apiKeyEnv: 'FAKE_UPSTREAM_KEY',
      }),
      FAKE_UPSTREAM_KEY: 'sk-worker',
    });
    await restate.register(`http://127.0.0.1:${worker.port}`);
  });

  // A proxy left running by a failed test is ended before the worker and the server go.
  afterEach(stopRunningClis);

  afterAll(async () => {
    if (worker) await stopWorker(worker);
    await restate?.dispose();
    await upstream?.close();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  /** `compactor serve --engine restate` as a process; resolves once it serves, with its URL and a stop. */
  const proxy = async () => {
    const cli = startCli(['serve', '--port', '0', ...restateServeArgs(restate, upstream.url, WINDOW)], {
      cwd,
    });
    const ready = /compactor: serving on (http:\/\/127\.0\.0\.1:\d+)\n/;
    await cli.waitFor(ready);
    return {
      url: ready.exec(cli.err())![1],
      async close() {
        cli.child.kill('SIGTERM');
        expect((await cli.done).code).toBe(0);
      },
    };
  };

  // Anthropic refuses tool blocks from a request that does not define its tools.
  const READ_TOOL = { name: 'read', input_schema: { type: 'object', properties: {} } };
  const SUMMARY_PROMPT_START = 'You are writing a checkpoint of an agent session';
  const send = (server: { url: string }, messages: unknown[], n: number, named: boolean) =>
    fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'sk-test',
        ...(named ? { 'x-compactor-session': SESSION } : {}),
        'x-test-step': String(n),
        'x-test-steps': '100',
      },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 256, tools: [READ_TOOL], messages }),
    });

  /** `GET /compactor/sessions/ID` through a proxy. */
  const show = async (server: { url: string }, id: string) => {
    const res = await fetch(`${server.url}/compactor/sessions/${encodeURIComponent(id)}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };
  // What the file engine shows of a session; on Restate some are left out, none added.
  const FILE_ENGINE_FIELDS = [
    ...['id', 'open', 'stored', 'branches', 'messages', 'historyTokens', 'summaries', 'summariesMade'],
    ...['summaryCalls', 'window', 'reservedOutput', 'prefixTokens', 'budgets', 'strategy', 'summarizer'],
    ...['cacheHealth', 'lastRequest', 'summaryCache'],
  ];

  it.each([
    ['named by the client', true],
    ['found by its history alone', false],
  ])(
    'R3/N1: a tool loop compacts through one proxy; a second proxy continues the session (%s) from Restate, no message lost or doubled',
    async (how, named) => {
      const messages: unknown[] = [{ role: 'user', content: `Read every file and report (${how}).` }];
      let session = '';
      const first = await proxy();
      let compactedAt = -1;
      let n = 0;
      try {
        for (; n < 20 && (compactedAt < 0 || n < compactedAt + 2); n++) {
          messages.push(...step(n));
          const res = await send(first, messages, n, named);
          expect(res.status).toBe(200);
          await res.text();
          session = res.headers.get('x-compactor-session')!;
          if (res.headers.get('x-compactor-compacted') === 'true' && compactedAt < 0) compactedAt = n;
        }
      } finally {
        await first.close();
      }
      expect(compactedAt).toBeGreaterThanOrEqual(0);
      // The worker's summary of the tool loop lists the loop's tools in Anthropic's shape, tool
      // use off, as the API requires of a request with tool blocks (the fake refuses one without).
      const summaries = upstream.requests.filter((r) => r.raw.includes(SUMMARY_PROMPT_START));
      expect(summaries.length).toBeGreaterThan(0);
      for (const r of summaries) {
        expect(r.path).toBe('/v1/messages');
        expect(r.headers['x-api-key']).toBe('sk-worker');
        expect(r.body.model).toBe('claude-haiku-4-5');
        // The agent's own tool as it sent it, then the recall tool the proxy offers.
        expect(r.body.tools[0]).toEqual(READ_TOOL);
        expect(r.body.tools.map((t: { name: string }) => t.name)).toEqual([READ_TOOL.name, 'recall']);
        expect(r.body.tool_choice).toEqual({ type: 'none' });
      }
      expect(upstream.refusals).toEqual([]);

      // A new proxy, with nothing in memory: the next request continues what Restate holds.
      const second = await proxy();
      try {
        // It shows the session from what Restate holds before it served any of its requests.
        const kept = await restate.call<{ history: unknown[] }>('compactorSession', session, 'state');
        const compactions = (await restate.sessionEvents(session)).filter(
          (e) => e.type === 'thread.compact_boundary',
        ).length;
        const shown = await show(second, session);
        expect(shown).toMatchObject({
          id: session,
          open: true,
          stored: true,
          branches: 1,
          messages: kept.history.length,
          summaries: 1,
          summariesMade: compactions,
          lastRequest: null,
        });
        expect(shown.historyTokens).toBeGreaterThan(0);
        expect(Object.keys(shown).filter((k) => !FILE_ENGINE_FIELDS.includes(k))).toEqual([]);
        // The worker's last summary calls, as the upstream counted them: kept with the session.
        const cache = shown.summaryCache as { calls: number; inputTokens: number; cachedTokens: number };
        expect(cache).toMatchObject({ request: 'fork', fallback: null });
        expect(cache.calls).toBeGreaterThanOrEqual(1);
        const counted = upstream.summaries.slice(-cache.calls);
        expect(cache.inputTokens).toBe(counted.reduce((n, u) => n + u.input, 0));
        expect(cache.cachedTokens).toBe(counted.reduce((n, u) => n + u.cached, 0));
        // The window and cache health are this proxy's counts: none before it served the session.
        expect(shown).not.toHaveProperty('window');
        expect(shown).not.toHaveProperty('cacheHealth');

        messages.push(...step(n));
        const res = await send(second, messages, n, named);
        expect(res.status).toBe(200);
        await res.text();
        expect(res.headers.get('x-compactor-session')).toBe(session);
        expect(res.headers.get('x-compactor-compacted')).toBe('false');
        const forwarded = JSON.stringify(upstream.requests.at(-1)!.body);
        // The summary written in the first proxy's turn is what the second one sends, with the newest step after it.
        expect(forwarded.includes('summary written at step')).toBe(true);
        expect(forwarded.includes(`"tool_use_id":"c${n}"`)).toBe(true);
        const after = await show(second, session);
        expect(after).toMatchObject({ window: WINDOW, lastRequest: { compacted: false } });
        expect(after.messages).toBe((shown.messages as number) + 2);
        expect(after).toHaveProperty('cacheHealth');
        expect((await fetch(`${second.url}/compactor/sessions/never-seen`)).status).toBe(404);
      } finally {
        await second.close();
      }
      expect(upstream.violations).toEqual([]);

      // Every message the client sent is stored once, across the compaction and the restart.
      if (named) expect(session).toBe(SESSION);
      // The object keeps the events from its last compaction on; the older ones are in numbered
      // chunks of the archive, which follow each other with no gap.
      const events = await restate.sessionEvents(session);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const results = events.flatMap((e) =>
        e.type === 'message.appended' && e.message.role === 'tool' ? [e.message.toolCallId] : [],
      );
      expect(results).toEqual(Array.from({ length: n + 1 }, (_, i) => `c${i}`));
      expect(events.some((e) => e.type === 'thread.compact_boundary')).toBe(true);
    },
  );

  it('the provider usage of a request reaches the session object; an edited list keeps the compaction on its new branch', async () => {
    const server = await proxy();
    const id = 'edit-me';
    const sendAs = (messages: unknown[], n: number) =>
      fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'sk-test',
          'x-compactor-session': id,
          'x-test-step': String(n),
          'x-test-steps': '100',
        },
        body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 256, tools: [READ_TOOL], messages }),
      });
    const summaries = () => upstream.requests.filter((r) => r.raw.includes(SUMMARY_PROMPT_START)).length;
    try {
      const messages: unknown[] = [{ role: 'user', content: 'Read every file and report (edited later).' }];
      let compactedAt = -1;
      let n = 0;
      for (; n < 20 && (compactedAt < 0 || n < compactedAt + 2); n++) {
        messages.push(...step(n));
        const res = await sendAs(messages, n);
        expect(res.status).toBe(200);
        await res.text();
        if (res.headers.get('x-compactor-compacted') === 'true' && compactedAt < 0) compactedAt = n;
      }
      expect(compactedAt).toBeGreaterThanOrEqual(0);

      // The fake reports the input tokens it counted; the proxy hands them to the session
      // object after answering, so the test waits until the object has them.
      const reported = estimateBodyTokens(upstream.requests.at(-1)!.body);
      type State = { usage: { inputTokens: number } | null; history: unknown[] };
      // The conversation's reader runs after the last request's settle call, so the session
      // object read next holds the turn that request kept.
      await restate.call('compactorSessionConversation', id, 'state');
      let state = await restate.call<State>('compactorSession', id, 'state');
      for (let polls = 0; state.usage?.inputTokens !== reported && polls < 1_000; polls++) {
        await new Promise((resolve) => setImmediate(resolve));
        state = await restate.call<State>('compactorSession', id, 'state');
      }
      expect(state.usage?.inputTokens).toBe(reported);
      // The object's next request is anchored on that count, not on its own estimate.
      const prepared = await restate.call<{ pressure: { tokens: number; source: string } }>(
        'compactorSession',
        id,
        'prepareRequest',
        {},
      );
      expect(prepared.pressure).toEqual({ tokens: reported, source: 'anchored' });

      // The client edits its last tool result: a new branch, which starts from the compacted
      // history (the summary and the tail) instead of the whole list, with no summary paid again.
      const paid = summaries();
      const last = messages.at(-1) as { content: [{ content: string }] };
      last.content[0].content = `edited: ${last.content[0].content.slice(0, 200)}`;
      const res = await sendAs(messages, n);
      expect(res.status).toBe(200);
      await res.text();
      expect(res.headers.get('x-compactor-compacted')).toBe('false');
      expect(summaries()).toBe(paid);
      const forwarded = JSON.stringify(upstream.requests.at(-1)!.body);
      expect(forwarded.includes('summary written at step')).toBe(true);
      expect(forwarded.includes('edited: file')).toBe(true);
      const point = await restate.call<{ branch: number; synced: number }>(
        'compactorSessionConversation',
        id,
        'state',
      );
      expect(point).toMatchObject({ branch: 1, synced: messages.length });
      const fork = await restate.call<State>('compactorSession', `${id}.fork-1`, 'state');
      // The old branch's history less its last message, then the edited one.
      expect(fork.history.length).toBe(state.history.length);
      expect(JSON.stringify(fork.history)).toContain('summary written at step');
    } finally {
      await server.close();
    }
  });

  it('a request whose fixed part alone is over the window is refused with 400, worded as the providers word it', async () => {
    const server = await proxy();
    try {
      const res = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'sk-test',
          'x-compactor-session': 'too-big',
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-6',
          max_tokens: 256,
          system: 'lorem ipsum dolor '.repeat(6_000),
          messages: [{ role: 'user', content: 'Hi.' }],
        }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/^prompt is too long: \d+ tokens > 16000 maximum \(compactor: /);
    } finally {
      await server.close();
    }
  });
});
