import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import type { RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import type { Reply } from '#dev/fakes/agent-wire.js';
import { deferred, type Deferred } from '#support/deferred.js';
import { HELD_ANSWERS, startHeldUpstream, type HeldProtocol } from '#support/serve/held-stream.js';
import { startProxyTo } from '#support/serve/proxy.js';

/**
 * A streamed answer reaches the client event by event: the fake model writes its first event,
 * then waits until the client has read that event through the proxy before writing the rest.
 * A proxy that gathered the stream (or a whole chunk of it) before passing it on would never
 * deliver that first event, and the test would not end.
 */

afterAll(() => freeEncoders());

const WINDOW = 16_000;
const REPLY: Reply = {
  key: 'held',
  text: 'Reading the file the task names, then the test that fails.',
  call: { id: 'call_held_1', name: 'read_file', arguments: '{"path":"src/main.ts"}' },
};

type Protocol = HeldProtocol;

const requestBody = (protocol: Protocol) => {
  const user = 'Fix the failing test in src/main.ts.';
  if (protocol === 'anthropic')
    return {
      model: 'claude-sonnet-4-6',
      max_tokens: 256,
      stream: true,
      messages: [{ role: 'user', content: user }],
    };
  if (protocol === 'openai-chat')
    return { model: 'gpt-4o', max_tokens: 256, stream: true, messages: [{ role: 'user', content: user }] };
  return { model: 'gpt-4o', max_output_tokens: 256, stream: true, input: user };
};

describe('compactor serve: streamed answers pass through event by event', () => {
  const gates: Deferred<void>[] = [];
  const started: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const g of gates.splice(0)) g.resolve();
    for (const s of started.splice(0).reverse()) await s.close();
  });

  it.each(Object.keys(HELD_ANSWERS) as Protocol[])(
    '%s: the first event reaches the client while the model still holds the rest; the whole stream follows intact',
    async (protocol) => {
      const gate = () => {
        const opened = deferred<void>();
        gates.push(opened);
        return opened.promise;
      };
      const upstream = await startHeldUpstream({ reply: REPLY, gate });
      started.push(upstream);
      const server: RunningServer = await startProxyTo(upstream, WINDOW);
      started.push(server);
      const res = await fetch(`${server.url}${HELD_ANSWERS[protocol].path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer sk-test',
          'x-api-key': 'sk-test',
        },
        body: JSON.stringify(requestBody(protocol)),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      // Read until one whole event (a blank line ends it) has come through the proxy.
      while (!text.includes('\n\n')) {
        const { value, done } = await reader.read();
        expect(done).toBe(false);
        text += decoder.decode(value, { stream: true });
      }
      expect(gates).toHaveLength(1);
      expect(text.split('\n\n').filter((e) => e.trim() !== '')).toHaveLength(1);
      gates[0]!.resolve();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      // Every event the model wrote arrived, the text and the call's arguments whole once joined.
      const events = text.split('\n\n').filter((e) => e.trim() !== '');
      expect(events.length).toBeGreaterThan(3);
      const joined = events.join('\n');
      for (const piece of [REPLY.text.slice(0, 10), REPLY.call!.id]) expect(joined).toContain(piece);
    },
  );
});
