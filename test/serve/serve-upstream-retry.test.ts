import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer as createTcpServer, connect, type AddressInfo, type Server } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { freeEncoders } from '#src/estimate/index.js';
import type { RunningServer, ServeOptions } from '#src/serve/index.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { startFakeServer, type Fault } from '#support/fake-http.js';
import { deferred } from '#support/deferred.js';
import { startProxyTo } from '#support/serve/proxy.js';

/**
 * The proxy sends a request again only when the provider surely did not act on it: it never
 * reached the provider (the connection was refused), or the provider refused it (408, 429,
 * 503, 529, or its own `x-should-retry: true`). A timeout or a reset after the request went
 * out, a 500/502/504, and an answer cut midway go to the client once, as they are: the
 * client's own retry decides, and nothing is paid twice behind its back.
 */

afterAll(() => freeEncoders());

const KEY = 'sk-upstream-retry-test-credential-123';
const WINDOW = 16_000;
const started: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function fakeModel(): Promise<FakeAgentUpstream> {
  const upstream = await startFakeAgentUpstream({ window: WINDOW });
  started.push(upstream);
  return upstream;
}

/** The proxy in front of `upstream`, with `http` as its time limits. */
async function proxyTo(upstream: { url: string }, http: ServeOptions['http']): Promise<RunningServer> {
  const server = await startProxyTo(upstream, WINDOW, { http });
  started.push(server);
  return server;
}

const chatBody = {
  model: 'gpt-4o',
  messages: [
    { role: 'system', content: 'You review code.' },
    { role: 'user', content: 'Read the README and summarise it.' },
  ],
};

function postChat(server: RunningServer, session: string) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${KEY}`,
      'x-compactor-session': session,
    },
    body: JSON.stringify(chatBody),
  });
}

/** Headers of a recorded request that say nothing about its connection. */
const sentHeaders = (h: Record<string, unknown>) => {
  const { connection: _c, ...rest } = h;
  return rest;
};

describe('compactor serve: a request the provider may have received is never sent twice', () => {
  it('the upstream reads the whole body and hangs past the time limit: one request upstream, the client gets a 502 in its own shape', async () => {
    const upstream = await fakeModel();
    upstream.script.push({ kind: 'hang' });
    const server = await proxyTo(upstream, { retries: 3, timeoutMs: 300 });
    const client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
    const failed = await client.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: [{ role: 'user', content: 'Hi.' }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failed).toBeInstanceOf(Anthropic.APIError);
    const error = failed as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(upstream.requests).toHaveLength(1);
  });

  it("after a timeout the client's own retry of the same request is the one that counts: each message once, upstream and in the session", async () => {
    const upstream = await fakeModel();
    const server = await proxyTo(upstream, { retries: 3, timeoutMs: 300 });
    const state = async () =>
      (await (await fetch(`${server.url}/compactor/sessions/timed-out`)).json()) as { messages: number };
    upstream.script.push({ kind: 'hang' });
    expect((await postChat(server, 'timed-out')).status).toBe(502);
    expect(upstream.requests).toHaveLength(1);
    // The failed request left its session as it was: empty.
    expect((await state()).messages).toBe(0);
    expect((await postChat(server, 'timed-out')).status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
    expect((await state()).messages).toBe(chatBody.messages.length - 1); // the system prompt is not one
    const task = chatBody.messages[1].content;
    expect(upstream.requests[1].raw.split(task)).toHaveLength(2);
  });

  it('the upstream resets the connection after reading the body: one request upstream, the client gets a 502', async () => {
    const upstream = await fakeModel();
    upstream.script.push({ kind: 'reset' });
    const server = await proxyTo(upstream, { retries: 3 });
    const res = await postChat(server, 'reset');
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: { type: 'server_error' } });
    expect(upstream.requests).toHaveLength(1);
  });

  it.each([500, 502, 504])(
    'a %i without x-should-retry goes to the client as the upstream sent it, after one request',
    async (status) => {
      const upstream = await fakeModel();
      const body = { error: { message: `upstream said ${status}`, type: 'server_error' } };
      upstream.script.push({ kind: 'status', status, body, headers: { 'retry-after': '0' } });
      const server = await proxyTo(upstream, { retries: 3 });
      const res = await postChat(server, `status-${status}`);
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual(body);
      // What the client's own retry reads is passed on.
      expect(res.headers.get('retry-after')).toBe('0');
      expect(upstream.requests).toHaveLength(1);
    },
  );

  it('an error answer to a request with tools (one the proxy reads whole for recall calls) reaches the client whole: body, headers and its length', async () => {
    const upstream = await fakeModel();
    const body = { error: { message: 'upstream said 500', type: 'server_error' } };
    upstream.script.push({ kind: 'status', status: 500, body, headers: { 'x-request-id': 'req_relayed' } });
    const server = await proxyTo(upstream, { retries: 3 });
    const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ ...chatBody, tools }),
    });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual(body);
    expect(res.headers.get('x-request-id')).toBe('req_relayed');
    // Its length said, as the upstream said it: not passed on in chunks of unknown length.
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(res.headers.get('x-compactor-recalls')).toBe('0');
    expect(upstream.requests).toHaveLength(1);
  });

  it('a streamed answer cut midway is not sent again: the client gets what came, once', async () => {
    const fake = await startFakeServer(
      (_req, _fault, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"choices":[{"index":0,"delta":{"content":"Half"}}]}\n\n', () =>
          res.socket?.destroy(),
        );
      },
      [],
      { window: WINDOW },
    );
    started.push(fake);
    const server = await proxyTo(fake, { retries: 3 });
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ ...chatBody, stream: true }),
    });
    expect(res.status).toBe(200);
    const read = await res.text().then(
      (text) => text,
      () => 'cut',
    );
    expect(read === 'cut' || read.includes('Half')).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('compactor serve: what the provider refused or never received is sent again, byte for byte', () => {
  it.each<[string, Fault]>([
    ['429 with retry-after', { kind: 'status', status: 429, headers: { 'retry-after': '0' } }],
    ['503 with retry-after-ms', { kind: 'status', status: 503, headers: { 'retry-after-ms': '20' } }],
    ['529 (overloaded)', { kind: 'status', status: 529 }],
    ['408', { kind: 'status', status: 408 }],
    ['500 with x-should-retry: true', { kind: 'status', status: 500, headers: { 'x-should-retry': 'true' } }],
  ])(
    '%s, then an answer: retried, and both attempts carry the same bytes and headers',
    async (_what, fault) => {
      const upstream = await fakeModel();
      upstream.script.push(fault);
      const server = await proxyTo(upstream, { retries: 2 });
      const res = await postChat(server, 'refused');
      expect(res.status).toBe(200);
      expect(upstream.requests).toHaveLength(2);
      const [first, second] = upstream.requests;
      expect(second.raw).toBe(first.raw);
      expect(sentHeaders(second.headers)).toEqual(sentHeaders(first.headers));
    },
  );

  it('a 503 with x-should-retry: false, or a wait longer than the cap, goes to the client with its headers', async () => {
    const upstream = await fakeModel();
    upstream.script.push(
      { kind: 'status', status: 503, headers: { 'x-should-retry': 'false' } },
      { kind: 'status', status: 429, headers: { 'retry-after': '3600' } },
    );
    const server = await proxyTo(upstream, { retries: 3 });
    const told = await postChat(server, 'told');
    expect(told.status).toBe(503);
    expect(told.headers.get('x-should-retry')).toBe('false');
    const later = await postChat(server, 'later');
    expect(later.status).toBe(429);
    expect(later.headers.get('retry-after')).toBe('3600');
    expect(upstream.requests).toHaveLength(2);
  });

  it('a refused request is retried as often as --retries allows, no more', async () => {
    const upstream = await fakeModel();
    for (let i = 0; i < 3; i++) upstream.script.push({ kind: 'status', status: 503 });
    const server = await proxyTo(upstream, { retries: 1 });
    const res = await postChat(server, 'budget');
    expect(res.status).toBe(503);
    expect(upstream.requests).toHaveLength(2);
  });

  it('a connection refused until the upstream comes up: retried, and the upstream gets the request once', async () => {
    const upstream = await fakeModel();
    const port = await freePort();
    const refused: number[] = [];
    const firstRefusal = deferred<void>();
    // undici reports each connection that failed on this channel.
    const onConnectError = (message: unknown) => {
      const { connectParams } = message as { connectParams: { port: string | number } };
      if (Number(connectParams.port) !== port) return;
      refused.push(port);
      firstRefusal.resolve();
    };
    subscribe('undici:client:connectError', onConnectError);
    try {
      const server = await proxyTo({ url: `http://127.0.0.1:${port}/v1` }, { retries: 20 });
      const answer = postChat(server, 'refused-connection');
      await firstRefusal.promise;
      // The upstream comes up on that port (a relay to the fake model).
      const relay = await relayOn(port, new URL(upstream.url));
      started.push(relay);
      const res = await answer;
      expect(res.status).toBe(200);
      expect(refused.length).toBeGreaterThanOrEqual(1);
      expect(upstream.requests).toHaveLength(1);
    } finally {
      unsubscribe('undici:client:connectError', onConnectError);
    }
  });
});

/** A port that was free a moment ago: nothing listens on it. */
async function freePort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A TCP relay on `port` to `target`: the upstream as it comes up on the port the proxy was given. */
async function relayOn(port: number, target: URL): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const relay: Server = createTcpServer((inbound) => {
    const outbound = connect(Number(target.port), target.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        relay.close(() => resolve());
      }),
  };
}
