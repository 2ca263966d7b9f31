import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer, type ServeOptions } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { FakeServer } from '#support/fake-http.js';
import { reviewChat } from '#support/serve/review-chat.js';

afterAll(() => freeEncoders());

const started: Array<RunningServer | FakeServer> = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(options: ServeOptions, window = 16_000) {
  const upstream = await startFakeAgentUpstream({ window });
  const server = await startServer({
    port: 0,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
    ...options,
  });
  started.push(upstream, server);
  return server;
}

async function send(server: RunningServer, body: unknown): Promise<string> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-eviction-test' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  return res.headers.get('x-compactor-session')!;
}

async function state(server: RunningServer, id: string) {
  const res = await fetch(`${server.url}/compactor/sessions/${id}`);
  return { status: res.status, body: res.status === 200 ? ((await res.json()) as any) : undefined };
}

describe('serve: sessions beyond --max-sessions', () => {
  it('an evicted session keeps nothing in memory; its next request finds it again by its history', async () => {
    const server = await setup({ maxSessions: 1 });
    const a = await send(server, reviewChat('parser', 0));
    expect((await state(server, a)).body.lastRequest).not.toBeNull();
    const b = await send(server, reviewChat('printer', 0));
    expect(b).not.toBe(a);
    // Closed to make room: no session, no last request left to show.
    expect((await state(server, a)).status).toBe(404);
    expect((await state(server, b)).status).toBe(200);
    const again = await send(server, reviewChat('parser', 1));
    expect(again).toBe(a);
    const back = (await state(server, a)).body;
    expect(back.messages).toBe(3);
    expect(back.lastRequest.tokensBefore).toBeGreaterThan(0);
    expect((await state(server, b)).status).toBe(404);
  });

  it('with --data-dir an evicted session is reopened from its store, not started over', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'compactor-evict-'));
    dirs.push(dataDir);
    const server = await setup({ maxSessions: 1, dataDir });
    const a = await send(server, reviewChat('parser', 0));
    const a2 = await send(server, reviewChat('parser', 1));
    expect(a2).toBe(a);
    await send(server, reviewChat('printer', 0));
    // Closed, its store kept; nothing of this process's own record of it is left.
    const closed = await state(server, a);
    expect(closed.body).toEqual({ id: a, open: false, stored: true, branches: 1 });
    const a3 = await send(server, reviewChat('parser', 2));
    expect(a3).toBe(a);
    const back = (await state(server, a)).body;
    // Every message once (the store's three and the two new), on the same branch: not imported again.
    expect(back).toMatchObject({ open: true, stored: true, branches: 1, messages: 5 });
    expect(readdirSync(dataDir).filter((n) => n.includes('.fork-'))).toEqual([]);
  });
});

describe('serve: sessions beyond --max-memory', () => {
  /** A conversation whose one user message is `chars` characters long. */
  const long = (topic: string, chars: number) => ({
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: `Review the ${topic} module:\n${'const x = 1;\n'.repeat(chars / 13)}` },
    ],
  });

  it('closes the least recently used sessions once those open hold more than the budget', async () => {
    // 1 MiB: one request of 300,000 characters counts 600,000 bytes, two do not fit.
    const server = await setup({ maxMemory: 1, capacity: 1_000_000 }, 1_000_000);
    const a = await send(server, long('parser', 300_000));
    const small = await send(server, reviewChat('small', 0));
    expect((await state(server, a)).status).toBe(200);
    const b = await send(server, long('printer', 300_000));
    // The oldest went to make room; the small one, used after it, stays.
    expect((await state(server, a)).status).toBe(404);
    expect((await state(server, b)).status).toBe(200);
    expect((await state(server, small)).status).toBe(200);
    // Its next request starts it again (without --data-dir there is nothing to reopen).
    expect(await send(server, long('parser', 300_000))).toBe(a);
    expect((await state(server, b)).status).toBe(404);
  });
});
