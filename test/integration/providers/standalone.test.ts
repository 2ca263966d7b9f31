import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { resolveRoute, type ResolvedRoute } from '#src/providers/catalog.js';
import { ContextCapacityError, ProviderError } from '#src/core/errors.js';
import { createProviderClients } from '#src/providers/clients.js';
import type { HttpOptions } from '#src/providers/http.js';
import { createStandaloneClient } from '#src/providers/openai-responses/compact-client.js';
import { toResponsesInput } from '#src/providers/openai-responses/convert.js';
import type { FakeServer } from '#support/fake-http.js';
import { FAKE_ENCRYPTED, startFakeOpenAI, startFakeXai } from '#support/fake-openai.js';
import { catalogWindow } from '#support/fake-window.js';

const KEY = 'sk-test-FAKEKEY0123456789abcdef';
const FAST: HttpOptions = { minRetryDelayMs: 1, maxRetryDelayMs: 5, retries: 2, timeoutMs: 120_000 };
const history: Message[] = [
  msg.system('history reminder: do not touch prod'),
  msg.user('Run the tests.'),
  msg.assistant('', [{ id: 'call_A1', name: 'shell', arguments: '{"cmd":"npm test"}' }]),
  msg.tool('call_A1', '12 passing', 'shell'),
  msg.user('Now add a lint step.'),
];

let srv: FakeServer;
let route: ResolvedRoute;
beforeAll(async () => {
  srv = await startFakeOpenAI({ window: catalogWindow('openai', 'gpt-5.4') });
  route = resolveRoute({ provider: 'openai', model: 'gpt-5.4', baseUrl: srv.url }, { OPENAI_API_KEY: KEY });
});
afterAll(() => srv.close());

const last = () => srv.requests[srv.requests.length - 1];

describe('NativeStandalone over HTTP (O1–O3)', () => {
  it('O1/O2: POST {base}/responses/compact with only the allowed fields and bearer auth', async () => {
    const client = createStandaloneClient(route, FAST);
    await client.compactStandalone({
      model: 'gpt-5.4',
      input: history,
      instructions: 'Keep exact commands.',
      serviceTier: 'flex',
      promptCacheKey: 'sess-1',
      promptCacheRetention: '24h',
      promptCacheOptions: { mode: 'explicit', ttl: '30m' },
    });
    const req = last();
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v1/responses/compact');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(Object.keys(req.body).sort()).toEqual(
      [
        'input',
        'instructions',
        'model',
        'prompt_cache_key',
        'prompt_cache_options',
        'prompt_cache_retention',
        'service_tier',
      ].sort(),
    );
    for (const banned of ['stream', 'max_output_tokens', 'store', 'include', 'reasoning', 'text', 'tools'])
      expect(req.body).not.toHaveProperty(banned);
    expect(req.body.instructions).toBe('Keep exact commands.');
    // Custom instructions: history system reminders reach the compactor.
    expect(req.body.input[0]).toEqual({
      type: 'message',
      role: 'developer',
      content: [{ type: 'input_text', text: 'history reminder: do not touch prod' }],
    });
  });

  it('O1: optional fields are absent when unset (not null, not false)', async () => {
    await createStandaloneClient(route, FAST).compactStandalone({ model: 'gpt-5.4', input: history });
    expect(Object.keys(last().body).sort()).toEqual(['input', 'model']);
  });

  it('O3: returned items become canonical messages replayed verbatim in the next Responses request', async () => {
    const result = await createStandaloneClient(route, FAST).compactStandalone({
      model: 'gpt-5.4',
      input: history,
    });
    expect(result.items.map((m) => m.role)).toEqual(['user', 'user', 'assistant']);
    expect(result.usage).toEqual({ inputTokens: 41210, outputTokens: 2050, cachedInputTokens: 38912 });
    const next = toResponsesInput([...result.items, msg.user('continue')]);
    expect(next[2]).toEqual({
      id: 'cmp_01',
      type: 'compaction',
      encrypted_content: FAKE_ENCRYPTED,
      future_field: { kept: true },
    });
    expect(next[0]).toEqual({
      id: 'msg_u1',
      type: 'message',
      status: 'completed',
      role: 'user',
      content: [{ type: 'input_text', text: 'Run the tests.' }],
    });
    // The summary client sends that window on the next Responses request, compaction item intact.
    const { summary } = createProviderClients(route, FAST);
    await summary.summarize({ model: 'gpt-5.4', messages: result.items, instructions: 'Summarize.' });
    expect(last().path).toBe('/v1/responses');
    expect(last().body.input).toContainEqual({
      id: 'cmp_01',
      type: 'compaction',
      encrypted_content: FAKE_ENCRYPTED,
      future_field: { kept: true },
    });
  });

  it('S4: retry on 429 honouring retry-after-ms, then success', async () => {
    srv.script.push({ kind: 'rate-limit', retryAfterMs: '20', retryAfter: '30' });
    const before = srv.requests.length;
    const notes: string[] = [];
    const t0 = Date.now();
    const r = await createStandaloneClient(route, {
      ...FAST,
      onRetry: (n) => notes.push(n),
    }).compactStandalone({ model: 'gpt-5.4', input: history });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(15);
    expect(r.items.length).toBe(3);
    expect(srv.requests.length - before).toBe(2);
    expect(notes[0]).toMatch(/attempt 1 failed: .*HTTP 429/);
  });

  it('S4: retries exhausted → one ProviderError naming provider, model and status', async () => {
    srv.script.push({ kind: 'server-error' }, { kind: 'server-error' }, { kind: 'server-error' });
    const before = srv.requests.length;
    const err = await createStandaloneClient(route, FAST)
      .compactStandalone({ model: 'gpt-5.4', input: history })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.message).toMatch(/^openai\/gpt-5\.4 HTTP 500/);
    expect(srv.requests.length - before).toBe(3);
  });

  it('S4: non-retryable errors are surfaced once with a bounded cause and no secret', async () => {
    srv.script.push({
      kind: 'status',
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${KEY}. ${'pad '.repeat(500)}`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    });
    const before = srv.requests.length;
    const err = await createStandaloneClient(route, FAST)
      .compactStandalone({ model: 'gpt-5.4', input: history })
      .catch((e) => e);
    expect(srv.requests.length - before).toBe(1);
    expect(err.info).toMatchObject({
      provider: 'openai',
      model: 'gpt-5.4',
      status: 401,
      code: 'invalid_api_key',
      retryable: false,
    });
    expect(err.message).not.toContain(KEY);
    expect(err.message.length).toBeLessThan(400);
    expect(String(err.stack)).not.toContain(KEY);
  });

  it('L5: a context overflow is a ContextCapacityError and is not retried', async () => {
    srv.script.push({ kind: 'overflow', shape: 'openai-responses' });
    const before = srv.requests.length;
    const err = await createStandaloneClient(route, FAST)
      .compactStandalone({ model: 'gpt-5.4', input: history })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ContextCapacityError);
    expect(err.info.code).toBe('context_length_exceeded');
    expect(srv.requests.length - before).toBe(1);
  });

  it('S4: a hung server times out per attempt and the timeout is retried, then reported', async () => {
    srv.script.push({ kind: 'hang' }, { kind: 'hang' });
    const err = await createStandaloneClient(route, { ...FAST, retries: 1, timeoutMs: 100 })
      .compactStandalone({ model: 'gpt-5.4', input: history })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.info.code).toBe('timeout');
    expect(err.message).toMatch(/timed out after 100 ms/);
  });

  it('S4: the caller AbortSignal ends the request without retries', async () => {
    // Abort once the server holds the request: a fixed delay could fire before a loaded
    // machine has sent it, and then no request would arrive at all.
    const ac = new AbortController();
    srv.script.push({ kind: 'hold', until: new Promise(() => undefined), onHeld: () => ac.abort() });
    const before = srv.requests.length;
    const err = await createStandaloneClient(route, FAST)
      .compactStandalone({ model: 'gpt-5.4', input: history }, ac.signal)
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.info.code).toBe('aborted');
    expect(srv.requests.length - before).toBe(1);
  });

  it('S4: aborting during a server-requested retry wait ends the call at once, with no second attempt', async () => {
    // The server asks for an hour's pause; the abort lands inside it. Without an abortable wait
    // this test would sit out the pause and hit the test timeout.
    srv.script.push({ kind: 'rate-limit', retryAfter: '3600' });
    const before = srv.requests.length;
    const ac = new AbortController();
    const err = await createStandaloneClient(route, {
      ...FAST,
      retryAfterCapMs: 3_600_000,
      onRetry: () => setTimeout(() => ac.abort(), 20),
    })
      .compactStandalone({ model: 'gpt-5.4', input: history }, ac.signal)
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.info.code).toBe('aborted');
    expect(srv.requests.length - before).toBe(1);
  });

  it('S4: a connection reset is retried', async () => {
    srv.script.push({ kind: 'reset' });
    const r = await createStandaloneClient(route, FAST).compactStandalone({
      model: 'gpt-5.4',
      input: history,
    });
    expect(r.items.length).toBe(3);
  });

  it('S4: malformed JSON and a wrong shape are non-retryable ProviderErrors naming the problem', async () => {
    srv.script.push({ kind: 'malformed-json' });
    const e1 = await createStandaloneClient(route, FAST)
      .compactStandalone({ model: 'gpt-5.4', input: history })
      .catch((e) => e);
    expect(e1.info.code).toBe('malformed_json');
    expect(e1.message).toMatch(/not valid JSON/);
    srv.script.push({ kind: 'bad-shape' });
    const e2 = await createStandaloneClient(route, FAST)
      .compactStandalone({ model: 'gpt-5.4', input: history })
      .catch((e) => e);
    expect(e2.message).toMatch(/malformed compaction response: field output/);
  });
});

describe('NativeStandalone on xAI and via the factory (S1)', () => {
  let xai: FakeServer;
  beforeAll(async () => {
    xai = await startFakeXai({ window: catalogWindow('xai', 'grok-4') });
  });
  afterAll(() => xai.close());

  it('S1/O1: xAI compact uses the same endpoint shape; a single compaction item comes back', async () => {
    const r = resolveRoute({ provider: 'xai', model: 'grok-4', baseUrl: xai.url }, { XAI_API_KEY: KEY });
    const res = await createStandaloneClient(r, FAST).compactStandalone({ model: 'grok-4', input: history });
    expect(xai.requests[0].path).toBe('/v1/responses/compact');
    expect(Object.keys(xai.requests[0].body).sort()).toEqual(['input', 'model']);
    expect(res.items).toEqual([
      {
        role: 'assistant',
        content: '',
        reasoningDetails: [{ type: 'compaction', id: 'cmp_fake01', encrypted_content: FAKE_ENCRYPTED }],
      },
    ]);
    // Off-host xAI is Local even for an allow-listed model.
    expect(createProviderClients(r, FAST).strategy.kind).toBe('local');
  });

  it('S1: the factory returns a standalone client for trusted hosts, a summary client always', () => {
    const official = resolveRoute({ provider: 'openai', model: 'gpt-5.4' }, { OPENAI_API_KEY: KEY });
    const c = createProviderClients(official);
    expect(c.strategy.kind).toBe('nativeStandalone');
    expect(c.standalone?.model).toBe('gpt-5.4');
    expect(c.inline).toBeUndefined();
    expect(c.summary.provider).toBe('openai');
  });
});
