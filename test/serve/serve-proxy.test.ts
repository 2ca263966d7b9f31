import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startServer, type RunningServer, type ServeOptions } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import type { FakeServer } from '#support/fake-http.js';
import { estimateBodyTokens } from '#support/fake-window.js';
import { withRecallToolText } from '#support/serve/recall-tool.js';

afterAll(() => freeEncoders());

const KEY = 'sk-serve-proxy-test-credential-123';
const WINDOW = 16_000;
const started: Array<RunningServer | FakeServer> = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(options: ServeOptions = {}) {
  const upstream = await startFakeAgentUpstream({ window: WINDOW });
  const server = await startServer({
    port: 0,
    anthropicUpstream: upstream.url,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
    ...options,
  });
  started.push(upstream, server);
  return { upstream, server };
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'compactor-serve-'));
  dirs.push(d);
  return d;
}

const anthropicBody = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-6',
  max_tokens: 512,
  system: 'You review code.',
  messages: [{ role: 'user', content: 'Read the README and summarise it.' }],
  ...extra,
});

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [
    { role: 'system', content: 'You review code.' },
    { role: 'user', content: 'Read the README and summarise it.' },
  ],
  ...extra,
});

function post(server: RunningServer, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Every file under `dir`, read as text. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, 'utf8'));
}

type Protocol = 'anthropic' | 'openai-chat' | 'openai-responses';

const READ_TOOL = { name: 'read', input_schema: { type: 'object', properties: {} } };

/** One tool step (a call and its ~1,000-token result) in each protocol's request shape. */
const TOOL_LOOPS: Record<
  Protocol,
  { path: string; model: string; first: unknown[]; step(n: number): unknown[] }
> = {
  anthropic: {
    path: '/v1/messages',
    model: 'claude-sonnet-4-6',
    first: [{ role: 'user', content: 'Read every file and report.' }],
    step: (n) => [
      { role: 'assistant', content: [{ type: 'tool_use', id: `c${n}`, name: 'read', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: `c${n}`,
            content: `file ${n}: ${'lorem ipsum dolor '.repeat(150)}`,
          },
        ],
      },
    ],
  },
  'openai-chat': {
    path: '/v1/chat/completions',
    model: 'gpt-4o',
    first: [{ role: 'user', content: 'Read every file and report.' }],
    step: (n) => [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${n}`, type: 'function', function: { name: 'read', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: `c${n}`, content: `file ${n}: ${'lorem ipsum dolor '.repeat(150)}` },
    ],
  },
  'openai-responses': {
    path: '/v1/responses',
    model: 'gpt-4o',
    first: [{ role: 'user', content: 'Read every file and report.' }],
    step: (n) => [
      { type: 'function_call', call_id: `c${n}`, name: 'read', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: `c${n}`,
        output: `file ${n}: ${'lorem ipsum dolor '.repeat(150)}`,
      },
    ],
  },
};

/** Sends a growing tool loop (1,000-token results) until a request compacts; returns what each answer said. */
async function growUntilCompacted(
  server: RunningServer,
  headers: Record<string, string> = {},
  protocol: Protocol = 'openai-chat',
) {
  const loop = TOOL_LOOPS[protocol];
  const messages: unknown[] = [...loop.first];
  const seen: Array<{
    before: number;
    after: number;
    compacted: string | null;
    status: number;
    session: string | null;
  }> = [];
  for (let step = 0; step < 12 && !seen.some((s) => s.compacted === 'true'); step++) {
    messages.push(...loop.step(step));
    const body =
      protocol === 'openai-responses'
        ? { model: loop.model, max_output_tokens: 256, input: messages }
        : { model: loop.model, max_tokens: 256, messages };
    // Anthropic refuses tool blocks from a request that does not define its tools.
    if (protocol === 'anthropic') Object.assign(body, { tools: [READ_TOOL] });
    const res = await post(server, loop.path, body, headers);
    seen.push({
      status: res.status,
      before: Number(res.headers.get('x-compactor-tokens-before')),
      after: Number(res.headers.get('x-compactor-tokens-after')),
      compacted: res.headers.get('x-compactor-compacted'),
      session: res.headers.get('x-compactor-session'),
    });
  }
  return seen;
}

describe('compactor serve: sessions', () => {
  it('names the session by x-compactor-session, else metadata.user_id, prompt_cache_key, user or safety_identifier', async () => {
    const { server } = await setup({ capacity: WINDOW });
    const sessionOf = async (path: string, body: unknown, headers?: Record<string, string>) =>
      (await post(server, path, body, headers)).headers.get('x-compactor-session');
    expect(await sessionOf('/v1/messages', anthropicBody(), { 'x-compactor-session': 'by-header' })).toBe(
      'by-header',
    );
    expect(await sessionOf('/v1/messages', anthropicBody({ metadata: { user_id: 'user-7' } }))).toBe(
      'user-7',
    );
    expect(await sessionOf('/v1/chat/completions', chatBody({ prompt_cache_key: 'cache-key-1' }))).toBe(
      'cache-key-1',
    );
    expect(await sessionOf('/v1/chat/completions', chatBody({ user: 'end-user-2' }))).toBe('end-user-2');
    expect(
      await sessionOf('/v1/responses', {
        model: 'gpt-4o',
        input: 'hello',
        safety_identifier: 'safety-3',
      }),
    ).toBe('safety-3');
  });

  it('a side request under the same client id but with another opening gets a session of its own', async () => {
    const { server } = await setup({ capacity: WINDOW });
    const id = async (body: unknown) =>
      (await post(server, '/v1/messages', body)).headers.get('x-compactor-session');
    const metadata = { user_id: 'user_abc_session_1' };
    const main = anthropicBody({ metadata });
    expect(await id(main)).toBe('user_abc_session_1');
    const title = anthropicBody({
      metadata,
      system: 'Write a five-word title.',
      messages: [{ role: 'user', content: 'fix the test' }],
    });
    const titleSession = await id(title);
    expect(titleSession).toMatch(/^user_abc_session_1~[0-9a-f]{8}$/);
    const next = anthropicBody({
      metadata,
      messages: [
        ...main.messages,
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: 'Thanks.' },
      ],
    });
    expect(await id(next)).toBe('user_abc_session_1');
    const state = (await (await fetch(`${server.url}/compactor/sessions/user_abc_session_1`)).json()) as any;
    expect(state).toMatchObject({ messages: 3, branches: 1 });
  });

  it('without an id, a request continuing a stored history lands in that session, also after a restart', async () => {
    const dataDir = tempDir();
    const first = await setup({ capacity: WINDOW, dataDir });
    const opening = chatBody();
    const one = await post(first.server, '/v1/chat/completions', opening);
    const id = one.headers.get('x-compactor-session');
    expect(id).toMatch(/^c-/);
    const longer = chatBody({
      messages: [
        ...opening.messages,
        { role: 'assistant', content: 'It describes a proxy.' },
        { role: 'user', content: 'And the tests?' },
      ],
    });
    expect(
      (await post(first.server, '/v1/chat/completions', longer)).headers.get('x-compactor-session'),
    ).toBe(id);
    // Another conversation with another opening is another session.
    const other = chatBody({ messages: [{ role: 'user', content: 'Something else entirely.' }] });
    expect(
      (await post(first.server, '/v1/chat/completions', other)).headers.get('x-compactor-session'),
    ).not.toBe(id);
    await first.server.close();
    const second = await startServer({
      port: 0,
      capacity: WINDOW,
      dataDir,
      openaiUpstream: first.upstream.url,
    });
    started.push(second);
    const next = chatBody({
      messages: [
        ...longer.messages,
        { role: 'assistant', content: 'They pass.' },
        { role: 'user', content: 'Good.' },
      ],
    });
    expect((await post(second, '/v1/chat/completions', next)).headers.get('x-compactor-session')).toBe(id);
    const state = (await (await fetch(`${second.url}/compactor/sessions/${id}`)).json()) as Record<
      string,
      unknown
    >;
    expect(state).toMatchObject({ id, open: true, stored: true, messages: 5 });
  });
});

describe('compactor serve: what happened is visible', () => {
  it('C10: answers with token counts and x-compactor-compacted: true on the request that compacted; the session and the metrics show it', async () => {
    const { server, upstream } = await setup({
      capacity: 4_000,
      session: { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } },
    });
    upstream.window = 4_000;
    const seen = await growUntilCompacted(server, { 'x-compactor-session': 'visible' });
    expect(seen.every((s) => s.status === 200)).toBe(true);
    const compacting = seen.find((s) => s.compacted === 'true');
    expect(compacting).toBeDefined();
    expect(compacting!.after).toBeLessThan(compacting!.before);
    expect(seen.every((s) => s.after <= 4_000)).toBe(true);
    const state = (await (await fetch(`${server.url}/compactor/sessions/visible`)).json()) as any;
    expect(state.summaries).toBeGreaterThanOrEqual(1);
    // Summaries made (one per compaction the answers reported) and who really wrote them.
    expect(state.summariesMade).toBe(seen.filter((s) => s.compacted === 'true').length);
    expect(state.summarizer).toBe('a summary through the upstream (openai-chat, model gpt-4o)');
    expect(state.window).toBe(4_000);
    expect(state.lastRequest.protocol).toBe('openai-chat');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/compactor_compactions_total\{protocol="openai-chat"\} [1-9]/);
    expect(metrics).toMatch(/compactor_summary_calls_total\{protocol="openai-chat"\} [1-9]/);
    expect(metrics).toMatch(
      new RegExp(`compactor_requests_total\\{protocol="openai-chat",outcome="projected"\\} ${seen.length}`),
    );
    expect(metrics).toMatch(/compactor_tokens_before_total\{protocol="openai-chat"\} [1-9]/);
    expect(metrics).toMatch(/compactor_request_duration_seconds_count\{protocol="openai-chat"\} [1-9]/);
    expect((await fetch(`${server.url}/compactor/sessions/nobody`)).status).toBe(404);
    // The summary was written by the request's own model, through its upstream, with the client's credential.
    const summaryCalls = upstream.requests.filter((r) => r.raw.includes('You are writing a checkpoint'));
    expect(summaryCalls.length).toBeGreaterThanOrEqual(1);
    expect(
      summaryCalls.every((r) => r.headers.authorization === `Bearer ${KEY}` && r.body.model === 'gpt-4o'),
    ).toBe(true);
    expect(state.strategy).toBe('local');
  });

  it.each(['anthropic', 'openai-responses'] as const)(
    'S2: a %s request that compacts has its summary written through the same upstream, in its own wire shape',
    async (protocol) => {
      const { server, upstream } = await setup({
        capacity: 4_000,
        session: { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } },
      });
      upstream.window = 4_000;
      const seen = await growUntilCompacted(server, { 'x-compactor-session': protocol }, protocol);
      expect(seen.every((s) => s.status === 200)).toBe(true);
      expect(seen.some((s) => s.compacted === 'true')).toBe(true);
      const summaryCalls = upstream.requests.filter((r) => r.raw.includes('You are writing a checkpoint'));
      expect(summaryCalls.length).toBeGreaterThanOrEqual(1);
      for (const r of summaryCalls) {
        expect(r.path).toBe(TOOL_LOOPS[protocol].path);
        expect(r.body.model).toBe(TOOL_LOOPS[protocol].model);
        if (protocol === 'anthropic')
          expect(r.body).toMatchObject({ max_tokens: expect.any(Number), messages: expect.any(Array) });
        else expect(r.body).toMatchObject({ store: false, input: expect.any(Array) });
      }
    },
  );

  it("records the provider's usage of what was sent (JSON and streamed) in the session", async () => {
    const fake = await startFakeAnthropic({ window: 200_000 });
    const server = await startServer({ port: 0, capacity: 200_000, anthropicUpstream: fake.url });
    started.push(fake, server);
    const client = new Anthropic({
      apiKey: KEY,
      baseURL: server.url,
      maxRetries: 0,
      defaultHeaders: { 'x-api-key': KEY },
    });
    const params = anthropicBody() as Anthropic.MessageCreateParamsNonStreaming;
    const options = { headers: { 'x-compactor-session': 'usage' } };
    await client.messages.create(params, options);
    const cache = async () =>
      ((await (await fetch(`${server.url}/compactor/sessions/usage`)).json()) as any).cacheHealth;
    // The fake reports 21,000 new input tokens and 500 read from the cache.
    expect(await cache()).toMatchObject({
      requests: 1,
      totalInputTokens: 21_500,
      totalCachedInputTokens: 500,
    });
    await client.messages.stream(params, options).finalMessage();
    expect(await cache()).toMatchObject({
      requests: 2,
      totalInputTokens: 43_000,
      totalCachedInputTokens: 1_000,
    });
  });

  it('with --summarizer offline, compaction makes no upstream call', async () => {
    const { server, upstream } = await setup({
      capacity: 4_000,
      summarizer: 'offline',
      session: { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } },
    });
    upstream.window = 4_000;
    const seen = await growUntilCompacted(server);
    expect(seen.some((s) => s.compacted === 'true')).toBe(true);
    expect(upstream.requests.filter((r) => r.raw.includes('You are writing a checkpoint'))).toEqual([]);
    const id = seen[0].session;
    const state = (await (await fetch(`${server.url}/compactor/sessions/${id}`)).json()) as any;
    expect(state.summarizer).toBe('offline (the embedded summarizer)');
    expect(state.summariesMade).toBeGreaterThanOrEqual(1);
  });

  it('never writes the client credential to the store, the sessions endpoint or the metrics', async () => {
    const dataDir = tempDir();
    const { server, upstream } = await setup({ capacity: WINDOW, dataDir });
    const client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
    await client.messages.create(anthropicBody() as Anthropic.MessageCreateParamsNonStreaming, {
      headers: { 'x-compactor-session': 'secret-check' },
    });
    expect(String(upstream.requests[0].headers.authorization)).toContain(KEY);
    const shown = await (await fetch(`${server.url}/compactor/sessions/secret-check`)).text();
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(filesUnder(dataDir).length).toBeGreaterThan(0);
    for (const text of [shown, metrics, ...filesUnder(dataDir)]) expect(text).not.toContain(KEY);
  });
});

describe('compactor serve: token counts', () => {
  it('B2: counts what it would send: POST /v1/messages/count_tokens gets the request fitted to the window', async () => {
    const { server, upstream } = await setup({ capacity: 4_000 });
    upstream.window = 4_000;
    const messages: unknown[] = [{ role: 'user', content: 'Read every file and report.' }];
    for (let step = 0; step < 6; step++)
      messages.push(
        { role: 'assistant', content: [{ type: 'tool_use', id: `t${step}`, name: 'read', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: `t${step}`,
              content: `file ${step}: ${'lorem ipsum dolor sit amet '.repeat(300)}`,
            },
          ],
        },
      );
    const body = { model: 'claude-sonnet-4-6', system: 'You review code.', messages };
    const client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
    const counted = await client.messages.countTokens(body as Anthropic.MessageCountTokensParams);
    expect(upstream.requests[0].path).toBe('/v1/messages/count_tokens');
    expect(counted.input_tokens).toBeLessThanOrEqual(4_000);
    // As the client holds it, the conversation would not fit.
    expect(estimateBodyTokens(body)).toBeGreaterThan(6_000);
  });

  it('B2: a request whose system prompt alone is larger than the window is a 400 in the provider wording agents recover from', async () => {
    const { server, upstream } = await setup({ capacity: 2_000 });
    const res = await post(
      server,
      '/v1/messages',
      anthropicBody({ system: 'You review code. '.repeat(600) }),
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    // Worded as the API words it ("prompt is too long: N tokens > M maximum"), then the proxy's why.
    expect(body.error.message).toMatch(
      /^prompt is too long: \d+ tokens > 2000 maximum \(compactor: .*window/,
    );
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('compactor serve: safe by default', () => {
  it('with an auth token, a request without it gets 401 in its protocol shape; the token is not forwarded', async () => {
    const { server, upstream } = await setup({ capacity: WINDOW, authToken: 'let-me-in' });
    const anthropic = await post(server, '/v1/messages', anthropicBody());
    expect(anthropic.status).toBe(401);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const openai = await post(server, '/v1/chat/completions', chatBody(), { 'x-compactor-token': 'wrong' });
    expect(openai.status).toBe(401);
    expect(await openai.json()).toMatchObject({ error: { type: 'authentication_error' } });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect(upstream.requests).toHaveLength(0);
    const ok = await post(server, '/v1/chat/completions', chatBody(), { 'x-compactor-token': 'let-me-in' });
    expect(ok.status).toBe(200);
    expect(upstream.requests[0].headers['x-compactor-token']).toBeUndefined();
  });

  it("answers an agent's reachability check of its base URL (HEAD / and GET /) itself, sending nothing upstream", async () => {
    const { server, upstream } = await setup({ capacity: WINDOW });
    const head = await fetch(`${server.url}/`, { method: 'HEAD', headers: { 'x-api-key': KEY } });
    expect(head.status).toBe(200);
    const get = await fetch(`${server.url}/`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ service: 'compactor serve', status: 'ok' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('refuses to start when an upstream is the server itself (the base URL already points at the proxy)', async () => {
    const taken = await startServer({ port: 0 });
    const port = new URL(taken.url).port;
    await taken.close();
    await expect(
      startServer({ port: Number(port), env: { ANTHROPIC_BASE_URL: `http://localhost:${port}` } }),
    ).rejects.toThrow(/the Anthropic upstream http:\/\/localhost:\d+ is this server itself/);
    // The port is free again: nothing was left listening.
    const again = await startServer({ port: Number(port) });
    started.push(again);
  });

  it('D3: refuses a body over the limit with 413 and malformed requests with 400, each in its protocol shape with one line', async () => {
    const { server, upstream } = await setup({ capacity: WINDOW, maxBodyBytes: 2_000 });
    const big = await post(server, '/v1/messages', anthropicBody({ system: 'x'.repeat(3_000) }));
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    const notJson = await post(server, '/v1/messages', '{"model": ');
    expect(notJson.status).toBe(400);
    const notJsonBody = (await notJson.json()) as any;
    expect(notJsonBody).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(notJsonBody.error.message).toMatch(/^compactor: malformed request: request body is not JSON/);
    const noModel = await post(server, '/v1/chat/completions', {
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(noModel.status).toBe(400);
    const noModelBody = (await noModel.json()) as any;
    expect(noModelBody.error.type).toBe('invalid_request_error');
    expect(noModelBody.error.message).toMatch(/model/);
    expect(noModelBody.error.message).not.toContain('\n');
    const badRole = await post(server, '/v1/responses', {
      model: 'gpt-4o',
      input: [{ role: 'wizard', content: 'hi' }],
    });
    expect(badRole.status).toBe(400);
    expect(((await badRole.json()) as any).error.message).toMatch(/input\[0\]/);
    expect(upstream.requests).toHaveLength(0);
  });

  it('passes an upstream error through with its status and body; the SDK sees the provider error', async () => {
    const { server, upstream } = await setup({ capacity: WINDOW });
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    upstream.script.push({ kind: 'status', status: 529, body: error });
    const res = await post(server, '/v1/messages', anthropicBody());
    expect(res.status).toBe(529);
    expect(await res.json()).toEqual(error);
    upstream.script.push({
      kind: 'status',
      status: 400,
      body: { error: { message: 'bad tool schema', type: 'invalid_request_error' } },
    });
    const client = new OpenAI({ apiKey: KEY, baseURL: `${server.url}/v1`, maxRetries: 0 });
    await expect(client.chat.completions.create(chatBody() as any)).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('bad tool schema'),
    });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/compactor_upstream_errors_total\{protocol="anthropic",status="529"\} 1/);
  });

  it('an unreachable upstream is a 502 in the protocol shape', async () => {
    const { server, upstream } = await setup({ capacity: WINDOW });
    upstream.script.push({ kind: 'reset' });
    const res = await post(server, '/v1/chat/completions', chatBody());
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.message).toMatch(/^compactor: the upstream did not answer/);
  });
});

describe('compactor serve: what it does not compact', () => {
  it('D2: a request that fits goes upstream as the client wrote it (every field, cache markers, thinking blocks)', async () => {
    const { server, upstream } = await setup({ capacity: WINDOW });
    const anthropic = {
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
      tools: [
        {
          name: 'bash',
          description: 'Run a command',
          input_schema: { type: 'object' },
          cache_control: { type: 'ephemeral' },
        },
      ],
      metadata: { user_id: 'user_1_session_2' },
      thinking: { type: 'enabled', budget_tokens: 512 },
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'List the files.', cache_control: { type: 'ephemeral' } }],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I will run ls.', signature: 'sig-abc' },
            { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'README.md\nsrc', is_error: false },
          ],
        },
      ],
      temperature: 1.0,
      stream: false,
    };
    const chat = {
      model: 'gpt-4o',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'README.md' },
      ],
      tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }],
      parallel_tool_calls: false,
      prompt_cache_key: 'k1',
    };
    const responses = {
      model: 'gpt-4o',
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files.' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA-opaque' },
        {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_1',
          name: 'bash',
          arguments: '{"command":"ls"}',
          status: 'completed',
        },
        { type: 'function_call_output', call_id: 'call_1', output: 'README.md' },
      ],
      include: ['reasoning.encrypted_content'],
      store: false,
      prompt_cache_key: 'k2',
    };
    for (const [path, body, protocol] of [
      ['/v1/messages', anthropic, 'anthropic'],
      ['/v1/chat/completions', chat, 'openai-chat'],
      ['/v1/responses', responses, 'openai-responses'],
    ] as const) {
      const res = await post(server, path, body);
      expect(res.status).toBe(200);
      // Every byte as sent, the recall tool added after the client's tools.
      expect(upstream.requests.at(-1)!.raw).toBe(withRecallToolText(protocol, JSON.stringify(body)));
    }
  });

  it('forwards a request for an unknown model without --capacity unchanged, saying so in a header', async () => {
    const { server, upstream } = await setup();
    const body = JSON.stringify(chatBody({ model: 'my-local-model-7b', temperature: 1.0 }));
    const res = await post(server, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-compactor-passthrough')).toMatch(/unknown model "my-local-model-7b"/);
    expect(res.headers.get('x-compactor-session')).toBeNull();
    expect(upstream.requests[0].raw).toBe(body);
  });

  it('forwards every other path unchanged: GET /v1/models with the client credential', async () => {
    const { server, upstream } = await setup();
    const client = new OpenAI({ apiKey: KEY, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['gpt-4o']);
    expect(upstream.requests[0]).toMatchObject({ method: 'GET', path: '/v1/models' });
    expect(upstream.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('forwards a Responses request that continues a stored response unchanged', async () => {
    const { server, upstream } = await setup({ capacity: WINDOW });
    const body = JSON.stringify({ model: 'gpt-4o', previous_response_id: 'resp_1', input: 'go on' });
    const res = await post(server, '/v1/responses', body);
    expect(res.headers.get('x-compactor-passthrough')).toMatch(/previous_response_id/);
    expect(upstream.requests[0].raw).toBe(body);
  });
});
