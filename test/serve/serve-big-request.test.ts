import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { largeBody } from '#dev/bench/serve-blocking.js';
import type { FakeServer } from '#support/fake-http.js';

afterAll(() => freeEncoders());

const started: Array<RunningServer | FakeServer> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

const BIG_BYTES = 8 * 1024 * 1024;

/** Sends a body with node:http; `written` settles once the whole body is handed to the socket. */
function post(url: string, session: string, body: string) {
  let written!: () => void;
  const flushed = new Promise<void>((resolve) => (written = resolve));
  const answered = new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/chat/completions`,
      {
        method: 'POST',
        // A connection of its own: a kept-alive one may be closed by the server's idle timer
        // just as it is reused, when this process (the server's too) was busy for seconds.
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: 'Bearer sk-big-request-test',
          'x-compactor-session': session,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body, () => written());
  });
  return { flushed, answered };
}

describe('serve: one large request does not hold the small requests of other sessions', () => {
  it('small requests of another session are answered while a large one is counted, before it goes upstream', async () => {
    const upstream = await startFakeAgentUpstream({ window: 100_000_000 });
    // A window that holds the whole history: nothing is compacted, the body goes upstream whole.
    const server = await startServer({
      port: 0,
      openaiUpstream: upstream.url,
      capacity: 100_000_000,
      maxBodyBytes: 32 * 1024 * 1024,
    });
    started.push(upstream, server);
    const big = post(server.url, 'big', largeBody(BIG_BYTES));
    await big.flushed;
    let bigDone = false;
    void big.answered.then(() => (bigDone = true));
    // Small requests of another session, one after another, until the large one reaches the upstream.
    const bigArrived = () => upstream.arrivals.some((a) => a.bytes > BIG_BYTES / 2);
    let answeredBefore = 0;
    for (let turn = 0; !bigDone; turn++) {
      const small = JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: `Small question ${turn}.` }],
      });
      expect(await post(server.url, 'small', small).answered).toBe(200);
      if (!bigArrived()) answeredBefore++;
    }
    expect(await big.answered).toBe(200);
    // Each small request went upstream and came back while the large one was still being worked on.
    expect(answeredBefore).toBeGreaterThanOrEqual(2);
    const first = upstream.arrivals.findIndex((a) => a.bytes > BIG_BYTES / 2);
    expect(first).toBeGreaterThanOrEqual(2);
  });
});
