import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { READ_FILE } from '#dev/loops/loop-matrix.js';
import { pieces, type Reply } from '#dev/fakes/agent-wire.js';
import { deferred, type Deferred } from '#support/deferred.js';
import { HELD_ANSWERS, startHeldUpstream, type HeldProtocol } from '#support/serve/held-stream.js';
import { startProxyTo } from '#support/serve/proxy.js';

/**
 * The proxy offers the recall tool on every request with tools, yet a streamed answer that is
 * not a recall turn still reaches the agent event by event: the fake model writes up to its
 * first text (or call) event, then waits until the client has read that event through the
 * proxy. A proxy that held the stream to its end would never deliver it, and the test would
 * not end.
 */

afterAll(() => freeEncoders());

const WINDOW = 16_000;
const CALL = { id: 'call_early_1', name: 'read_file', arguments: '{"path":"src/main.ts"}' };
const REPLIES: Record<string, Reply> = {
  'text first': { key: 'early', text: 'Reading the file the task names first.', call: CALL },
  'another tool call first': { key: 'early', text: '', call: CALL },
};
/** The bytes of the event the client must see before the model goes on. */
const firstOf = (reply: Reply) => JSON.stringify(reply.text === '' ? CALL.id : pieces(reply.text)[0]);

type Protocol = HeldProtocol;

/** What the client got: its text and calls joined, and the proxy's recall count. */
interface Got {
  text: string;
  calls: string[];
  recalls: string | null;
}

const USER = 'Fix the failing test in src/main.ts.';

/** Streams one answer with the official client, opening `gate` at the first text or call event. */
async function chat(proxy: string, gate: Deferred<void>): Promise<Got> {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy}/v1`, maxRetries: 0 });
  const answer = await client.chat.completions
    .create({
      model: 'gpt-4o',
      stream: true,
      max_completion_tokens: 256,
      tools: [{ type: 'function', function: READ_FILE }],
      messages: [{ role: 'user', content: USER }],
    })
    .withResponse();
  const got: Got = { text: '', calls: [], recalls: answer.response.headers.get('x-compactor-recalls') };
  for await (const chunk of answer.data) {
    const delta = chunk.choices[0]?.delta;
    if (delta?.content || delta?.tool_calls) gate.resolve();
    got.text += delta?.content ?? '';
    for (const c of delta?.tool_calls ?? []) if (c.function?.name) got.calls.push(c.function.name);
  }
  return got;
}

async function anthropic(proxy: string, gate: Deferred<void>): Promise<Got> {
  const client = new Anthropic({ apiKey: 'sk-test', baseURL: proxy, maxRetries: 0 });
  const tool = {
    name: READ_FILE.name,
    description: READ_FILE.description,
    input_schema: READ_FILE.parameters,
  };
  const answer = await client.messages
    .create({
      model: 'claude-sonnet-4-6',
      max_tokens: 256,
      stream: true,
      tools: [tool],
      messages: [{ role: 'user', content: USER }],
    })
    .withResponse();
  const got: Got = { text: '', calls: [], recalls: answer.response.headers.get('x-compactor-recalls') };
  for await (const e of answer.data) {
    if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') {
      gate.resolve();
      got.text += e.delta.text;
    }
    if (e.type === 'content_block_start' && e.content_block.type === 'tool_use') {
      gate.resolve();
      got.calls.push(e.content_block.name);
    }
  }
  return got;
}

async function responses(proxy: string, gate: Deferred<void>): Promise<Got> {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy}/v1`, maxRetries: 0 });
  const answer = await client.responses
    .create({
      model: 'gpt-4o',
      stream: true,
      max_output_tokens: 256,
      tools: [{ type: 'function', strict: false, ...READ_FILE }],
      input: USER,
    })
    .withResponse();
  const got: Got = { text: '', calls: [], recalls: answer.response.headers.get('x-compactor-recalls') };
  for await (const e of answer.data) {
    if (e.type === 'response.output_text.delta') {
      gate.resolve();
      got.text += e.delta;
    }
    if (e.type === 'response.output_item.added' && e.item.type === 'function_call') {
      gate.resolve();
      got.calls.push(e.item.name);
    }
  }
  return got;
}

const CLIENTS: Record<Protocol, (proxy: string, gate: Deferred<void>) => Promise<Got>> = {
  anthropic,
  'openai-chat': chat,
  'openai-responses': responses,
};

describe('compactor serve: offering recall does not hold back a streamed answer', () => {
  const started: Array<{ close(): Promise<void> }> = [];
  const gates: Deferred<void>[] = [];
  afterEach(async () => {
    for (const g of gates.splice(0)) g.resolve();
    for (const s of started.splice(0).reverse()) await s.close();
  });

  for (const protocol of Object.keys(HELD_ANSWERS) as Protocol[])
    for (const [shape, reply] of Object.entries(REPLIES))
      it(`C6: ${protocol}: ${shape}: the first event reaches the client while the model still holds the rest`, async () => {
        const gate = deferred<void>();
        gates.push(gate);
        // The stream holds after the reply's first text or call event.
        const upstream = await startHeldUpstream({
          reply,
          gate: () => gate.promise,
          holdAfter: (chunk) => chunk.includes(firstOf(reply)),
        });
        started.push(upstream);
        const server: RunningServer = await startProxyTo(upstream, WINDOW, { summarizer: 'offline' });
        started.push(server);
        const got = await CLIENTS[protocol](server.url, gate);
        expect(gate.settled).toBe(true);
        // The whole answer came through, as the model wrote it, with no recall round.
        expect(got.text).toBe(reply.text);
        expect(got.calls).toEqual(['read_file']);
        expect(got.recalls).toBe('0');
        // The recall tool was offered all the same.
        expect(upstream.tools).toHaveLength(1);
        expect(upstream.tools[0]).toContain('"recall"');
      });
});
