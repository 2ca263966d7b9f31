import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { anthropicAnswer } from '#dev/fakes/agent-wire.js';
import { heldWrites } from '#support/fake-http.js';
import { deferred } from '#support/deferred.js';
import {
  cleanUp,
  counter,
  fakeUpstream,
  gate,
  holdNext,
  longChat,
  post,
  startServe,
  storedMessages,
  streamMessages,
  tempDir,
  type Serve,
} from './harness.js';

/**
 * A client that hangs up costs only its own request: in every phase (its body half sent, the
 * upstream working, a summary call working, a passthrough, a forwarded path, the answer half
 * streamed) the proxy process stays up, the upstream request (or summary call) it was making
 * stops, another client's request in flight completes, and /metrics counts the abort.
 */

afterAll(() => freeEncoders());
afterEach(cleanUp);

const ABORTED = 'compactor_requests_total{protocol="openai-chat",outcome="aborted"}';
const chat = (content = 'Say hello.') => ({ model: 'gpt-4o', messages: [{ role: 'user', content }] });

/** Another client's request held at the upstream while the test aborts the first; resolves to its status once released. */
async function bystander(serve: Serve, upstream: Awaited<ReturnType<typeof fakeUpstream>>) {
  const hold = holdNext(upstream);
  const answer = post(serve.url, '/v1/chat/completions', chat('I am another client.'), {
    headers: { 'x-compactor-session': 'bystander' },
  });
  await hold.held;
  return {
    finish: async () => {
      hold.release.resolve();
      const res = await answer;
      return { status: res.status, body: (await res.json()) as any };
    },
  };
}

/** Aborts a request once the upstream holds it; resolves when the upstream saw its connection close. */
async function abortWhileHeld(
  upstream: Awaited<ReturnType<typeof fakeUpstream>>,
  send: (signal: AbortSignal) => Promise<Response>,
) {
  const hold = holdNext(upstream);
  const controller = new AbortController();
  const answer = send(controller.signal).then(
    () => 'answered',
    (e: unknown) => (e as Error).name,
  );
  await hold.held;
  controller.abort();
  expect(await answer).toBe('AbortError');
  // The proxy dropped the upstream request (or summary call) the client was waiting for.
  await hold.closed;
}

async function expectAlive(serve: Serve) {
  expect(serve.cli.child.exitCode).toBeNull();
  const res = await post(serve.url, '/v1/chat/completions', chat('Still there?'));
  expect(res.status).toBe(200);
  expect(serve.cli.err()).not.toMatch(/TypeError|Unhandled|at .*\.js:\d+/);
}

describe('compactor serve: a client that hangs up costs only its own request', () => {
  it('while the upstream works on its request (before any header was sent)', async () => {
    const upstream = await fakeUpstream();
    const serve = await startServe(upstream.url, tempDir());
    await abortWhileHeld(upstream, (signal) =>
      post(serve.url, '/v1/chat/completions', chat(), { signal, headers: { 'x-compactor-session': 'gone' } }),
    );
    const other = await bystander(serve, upstream);
    expect((await other.finish()).status).toBe(200);
    await expectAlive(serve);
    expect(await counter(serve.url, ABORTED)).toBe(1);
  });

  it('while a summary call works for it: the summary call stops and a retry stores each message once', async () => {
    const upstream = await fakeUpstream();
    const cwd = tempDir();
    const serve = await startServe(upstream.url, cwd);
    const messages = longChat(14);
    const send = (signal?: AbortSignal) =>
      post(
        serve.url,
        '/v1/chat/completions',
        { model: 'gpt-4o', max_tokens: 512, messages },
        { headers: { 'x-compactor-session': 'long' }, ...(signal ? { signal } : {}) },
      );
    await abortWhileHeld(upstream, send);
    // The held request was the summary call: the history did not fit.
    expect(upstream.requests.at(-1)!.raw).toContain('checkpoint of an agent session');
    const other = await bystander(serve, upstream);
    expect((await other.finish()).status).toBe(200);
    const retry = await send();
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-compactor-compacted')).toBe('true');
    // Every message of the conversation (without the system prompt) is stored once.
    const stored = storedMessages(join(cwd, 'sessions')).get('long')!;
    expect(stored.length).toBe(messages.length - 1);
    await expectAlive(serve);
    expect(await counter(serve.url, ABORTED)).toBe(1);
  });

  it('during a passthrough and on a forwarded path', async () => {
    const upstream = await fakeUpstream();
    const serve = await startServe(upstream.url, tempDir());
    // A Responses request that continues a stored response is passed through as it came.
    await abortWhileHeld(upstream, (signal) =>
      post(
        serve.url,
        '/v1/responses',
        { model: 'gpt-4o', input: 'Go on.', previous_response_id: 'resp_1' },
        { signal },
      ),
    );
    await abortWhileHeld(upstream, (signal) =>
      fetch(`${serve.url}/v1/models`, { signal, headers: { authorization: 'Bearer sk-x' } }),
    );
    const other = await bystander(serve, upstream);
    expect((await other.finish()).status).toBe(200);
    await expectAlive(serve);
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    expect(metrics).toContain('compactor_requests_total{protocol="openai-responses",outcome="aborted"} 1');
    expect(metrics).toContain('compactor_requests_total{protocol="other",outcome="aborted"} 1');
  });

  it('before its body has arrived whole', async () => {
    const upstream = await fakeUpstream();
    const serve = await startServe(upstream.url, tempDir());
    const other = await bystander(serve, upstream);
    const { port } = new URL(serve.url);
    const closed = deferred<void>();
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', 'content-length': '5000', authorization: 'Bearer sk-x' },
    });
    req.on('error', () => closed.resolve());
    req.on('close', () => closed.resolve());
    // Half a body, then the client is gone.
    req.write('{"model":"gpt-4o","messages":[{"role":"user","content":"he', () => req.destroy());
    await closed.promise;
    expect((await other.finish()).status).toBe(200);
    await expectAlive(serve);
    // Nothing of the half request reached the upstream: only the bystander's and the check's.
    expect(upstream.requests.length).toBe(2);
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    expect(metrics).toContain('outcome="aborted"} 1');
  });

  it('halfway through a streamed answer: the upstream stream stops too', async () => {
    const upstream = await fakeUpstream();
    // A model that writes the first event of its stream, then waits for the test.
    const rest = gate();
    const streamClosed = deferred<void>();
    const model: Server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        res.on('close', () => streamClosed.resolve());
        const reply = { key: 'half', text: 'Reading the file the task names first.' };
        anthropicAnswer(
          JSON.parse(raw),
          reply,
          heldWrites(res, () => rest.promise),
          200,
        );
      });
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    try {
      const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}`;
      const serve = await startServe(upstream.url, tempDir(), ['--anthropic-upstream', modelUrl]);
      const controller = new AbortController();
      const res = await streamMessages(serve.url, 'Fix the failing test.', {}, controller.signal);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('message_start');
      controller.abort();
      await streamClosed.promise;
      const other = await bystander(serve, upstream);
      expect((await other.finish()).status).toBe(200);
      await expectAlive(serve);
      const metrics = await (await fetch(`${serve.url}/metrics`)).text();
      expect(metrics).toContain('compactor_requests_total{protocol="anthropic",outcome="aborted"} 1');
    } finally {
      rest.resolve();
      await new Promise<void>((resolve) => model.close(() => resolve()));
    }
  });
});
