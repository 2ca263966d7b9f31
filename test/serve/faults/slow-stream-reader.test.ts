import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freeEncoders } from '#src/estimate/index.js';
import { deferred, type Deferred } from '#support/deferred.js';
import { cleanUp, fakeUpstream, startServe, streamMessages, tempDir } from './harness.js';

/**
 * A client that reads a long streamed answer slowly: the proxy stops reading the upstream while
 * the client's socket is full and goes on once the client reads again, and the client gets the
 * model's bytes exactly, whether the answer is relayed as it came (no tools) or event by event
 * (tools offered: the proxy watches for recall calls).
 */

afterAll(() => freeEncoders());
afterEach(cleanUp);

const EVENT_TEXT = 'x'.repeat(16 * 1024);
const EVENTS = 512; // 8 MiB of text: more than the sockets between the model and the client hold

/** Writes `text` and waits while the proxy does not take it; `waited` opens the first time it had to. */
async function write(res: ServerResponse, text: string, waited: Deferred<void>): Promise<void> {
  if (res.write(text)) return;
  waited.resolve();
  await new Promise<void>((resolve) => {
    res.once('drain', resolve);
    res.once('close', resolve);
  });
}

/** A model that streams a long Anthropic answer, written only as fast as the proxy reads it. */
async function longStreamModel() {
  const waited = deferred<void>();
  const sent: string[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      void (async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = (type: string, data: object) => {
          const text = `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
          sent.push(text);
          return write(res, text, waited);
        };
        await event('message_start', {
          message: {
            id: 'msg_long',
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-6',
            content: [],
            usage: { input_tokens: 40, output_tokens: 1 },
          },
        });
        await event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        for (let i = 0; i < EVENTS && !res.destroyed; i++)
          await event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: EVENT_TEXT } });
        await event('content_block_stop', { index: 0 });
        await event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9000 } });
        await event('message_stop', {});
        res.end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    waited,
    sent,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const TOOLS = [
  {
    name: 'read_file',
    description: 'Reads a file.',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

describe('compactor serve: a slow reader of a streamed answer', () => {
  it.each([
    ['relayed as it came (no tools)', {}],
    ['passed event by event (tools offered)', { tools: TOOLS }],
  ])('gets every byte of a long answer %s, the upstream read paused meanwhile', async (_, extra) => {
    const upstream = await fakeUpstream();
    const model = await longStreamModel();
    try {
      const serve = await startServe(upstream.url, tempDir(), ['--anthropic-upstream', model.url]);
      const res = await streamMessages(serve.url, 'Write a long answer.', extra);
      expect(res.status).toBe(200);
      // The client reads nothing until the model had to wait for the proxy to take its bytes.
      await model.waited.promise;
      const got = await res.text();
      expect(got.length).toBe(model.sent.join('').length);
      expect(got).toBe(model.sent.join(''));
    } finally {
      await model.close();
    }
  });
});
