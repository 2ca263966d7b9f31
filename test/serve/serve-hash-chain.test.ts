import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { parseRequest } from '#src/serve/protocols.js';
import { requestChain, withoutMarkers } from '#src/serve/hash-chain.js';
import { sharedLinks, valuesHashedSoFar } from '#src/adapters/shared/sync-point.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { FakeServer } from '#support/fake-http.js';
import { reviewChat } from '#support/serve/review-chat.js';

afterAll(() => freeEncoders());

const started: Array<RunningServer | FakeServer> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function setup(): Promise<{ server: RunningServer; upstream: FakeAgentUpstream }> {
  const upstream = await startFakeAgentUpstream({ window: 128_000 });
  const server = await startServer({ port: 0, openaiUpstream: upstream.url, http: { retries: 0 } });
  started.push(upstream, server);
  return { server, upstream };
}

async function send(server: RunningServer, body: unknown, session?: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-chain-test',
      ...(session !== undefined ? { 'x-compactor-session': session } : {}),
    },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  return res.headers.get('x-compactor-session')!;
}

async function held(server: RunningServer, id: string): Promise<number> {
  const res = await fetch(`${server.url}/compactor/sessions/${id}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: number }).messages;
}

/** The messages the upstream was last sent. */
const lastSent = (upstream: FakeAgentUpstream) => upstream.requests.at(-1)!.body.messages as unknown[];

describe('compactor serve: one hash chain per request for the session index and the sync point', () => {
  it('an edited old message reaches the upstream as the client edited it: the session forks there', async () => {
    const { server, upstream } = await setup();
    const id = await send(server, reviewChat('parser', 6));
    const edited = reviewChat('parser', 7);
    // The agent rewrote an old answer (as agents do when they drop or shorten old content).
    edited.messages[3] = { role: 'assistant', content: 'Notes 0, shortened.' };
    expect(await send(server, edited)).toBe(id);
    expect(lastSent(upstream)).toEqual(edited.messages);
    expect(await held(server, id)).toBe(edited.messages.length - 1);
  });

  it('a request that forks from the middle of a session the client named is found by its history', async () => {
    const { server, upstream } = await setup();
    expect(await send(server, reviewChat('printer', 8), 'alpha')).toBe('alpha');
    // Without the header the history finds it: a continuation by its head, a fork by a checkpoint.
    expect(await send(server, reviewChat('printer', 9))).toBe('alpha');
    const fork = reviewChat('printer', 2);
    fork.messages.push({ role: 'user', content: 'Start over with the error paths.' });
    expect(await send(server, fork)).toBe('alpha');
    expect(lastSent(upstream)).toEqual(fork.messages);
    expect(await held(server, 'alpha')).toBe(fork.messages.length - 1);
    // The fork is the session's history now: its continuation is found again.
    const next = { ...fork, messages: [...fork.messages, { role: 'assistant', content: 'On it.' }] };
    next.messages.push({ role: 'user', content: 'Go on.' });
    expect(await send(server, next)).toBe('alpha');
    expect(await held(server, 'alpha')).toBe(next.messages.length - 1);
  });

  it('a continuation hashes what it adds, not its history (as many values whatever its length)', async () => {
    const { server } = await setup();
    /** Values serialized and hashed while a session of `turns` turns sends its next request. */
    const hashedByNext = async (topic: string, turns: number) => {
      const id = await send(server, reviewChat(topic, turns));
      const before = valuesHashedSoFar();
      expect(await send(server, reviewChat(topic, turns + 1))).toBe(id);
      return valuesHashedSoFar() - before;
    };
    const short = await hashedByNext('lexer', 2);
    const long = await hashedByNext('linker', 80);
    expect(long).toBe(short);
    // Two new messages, not the 160 the long session already holds.
    expect(long).toBeLessThan(10);
  });

  it('a request that rewrites the last message finds where it forks without hashing the history', async () => {
    const { server, upstream } = await setup();
    /** Values hashed while a session of `turns` turns gets its last message rewritten. */
    const hashedByRewrite = async (topic: string, turns: number) => {
      const id = await send(server, reviewChat(topic, turns));
      const rewritten = reviewChat(topic, turns);
      rewritten.messages[rewritten.messages.length - 1] = { role: 'user', content: 'Something else.' };
      const before = valuesHashedSoFar();
      expect(await send(server, rewritten)).toBe(id);
      const hashed = valuesHashedSoFar() - before;
      expect(lastSent(upstream)).toEqual(rewritten.messages);
      expect(await held(server, id)).toBe(rewritten.messages.length - 1);
      return hashed;
    };
    expect(await hashedByRewrite('loader', 80)).toBe(await hashedByRewrite('runner', 2));
  });
});

describe('a request hash chain', () => {
  /** An Anthropic request of `n` user/assistant pairs with its cache breakpoint on message `mark`. */
  const anthropic = (n: number, mark: number, edit?: string) => {
    const messages = Array.from({ length: 2 * n }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: [
        {
          type: 'text',
          text: i === 2 && edit !== undefined ? edit : `message ${i} says "cache_control": {} in its text`,
          ...(i === mark ? { cache_control: { type: 'ephemeral' } } : {}),
        },
      ],
    }));
    return JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, system: 'Be brief.', messages });
  };
  const chainOf = (text: string) => requestChain(text, parseRequest('anthropic', text)).links;

  it('a cache breakpoint that moves to the newest message changes no old link', () => {
    const before = chainOf(anthropic(3, 5));
    const after = chainOf(anthropic(4, 7));
    expect(sharedLinks(before, after)).toBe(before.length);
    // From bytes: a body written with other spacing is another body.
    expect(sharedLinks(before, chainOf(JSON.stringify(JSON.parse(anthropic(4, 7)), null, 1)))).toBe(0);
  });

  it('an edited message changes its link and every one after it, wherever it is', () => {
    const before = chainOf(anthropic(4, 7));
    const edited = chainOf(anthropic(4, 7, 'message 2, rewritten'));
    expect(sharedLinks(before, edited)).toBe(2);
    expect(edited.slice(2).every((link, i) => link !== before[i + 2])).toBe(true);
  });

  it('gives each message of one item its own link, and reads every protocol list from its bytes', () => {
    const results = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'Read both.' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } },
            { type: 'tool_use', id: 't2', name: 'read', input: { path: 'b' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'A' },
            { type: 'tool_result', tool_use_id: 't2', content: 'B' },
          ],
        },
      ],
    });
    const links = chainOf(results);
    expect(new Set(links).size).toBe(links.length);
    expect(links.length).toBeGreaterThanOrEqual(4);
    const responses = (text: string) =>
      JSON.stringify({
        model: 'gpt-4.1',
        input: [
          { role: 'user', content: 'hi' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] },
        ],
      });
    const read = (text: string) => requestChain(text, parseRequest('openai-responses', text)).links;
    const [a, b] = [read(responses('done')), read(responses('done, edited'))];
    expect(a).toHaveLength(2);
    expect(sharedLinks(a, b)).toBe(1);
    // A bare string input has no list to read: its message is hashed as parsed, the same each time.
    const bare = JSON.stringify({ model: 'gpt-4.1', input: 'hello' });
    expect(read(bare)).toEqual(read(bare));
    expect(read(bare)).toHaveLength(1);
  });

  it('reads a Responses turn of several items (text and a call) from its bytes: a continuation keeps every link, an edit in it does not', () => {
    const turn = (i: number, args: string) => [
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: `Step ${i}.` }],
      },
      {
        type: 'function_call',
        call_id: `call_${i}`,
        name: 'read_file',
        arguments: args,
        status: 'completed',
      },
      { type: 'function_call_output', call_id: `call_${i}`, output: `contents ${i}` },
    ];
    const body = (steps: number, edit?: string) =>
      JSON.stringify({
        model: 'gpt-4o',
        instructions: 'You read files.',
        input: [
          { role: 'user', content: 'Read the files.' },
          ...Array.from({ length: steps }, (_, i) =>
            turn(i, i === 0 && edit ? edit : `{"path":"f${i}"}`),
          ).flat(),
        ],
      });
    const read = (text: string) => requestChain(text, parseRequest('openai-responses', text)).links;
    const before = read(body(3));
    const after = read(body(4));
    expect(after.length).toBeGreaterThan(before.length);
    expect(sharedLinks(before, after)).toBe(before.length);
    // From bytes: the same items written with other spacing share nothing.
    expect(sharedLinks(before, read(JSON.stringify(JSON.parse(body(3)), null, 1)))).toBe(0);
    // The first call's arguments edited: the opening message still matches, nothing after it.
    expect(sharedLinks(before, read(body(3, '{"path":"other"}')))).toBe(1);
  });

  it('strips only members named cache_control, never text that mentions them', () => {
    expect(withoutMarkers('{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}')).toBe(
      '{"type":"text","text":"a"}',
    );
    expect(withoutMarkers('{ "cache_control" : {"type":"x"} , "text":"a"}')).toBe('{ "text":"a"}');
    const quoted = '{"text":"say \\"cache_control\\": {} here","n":["cache_control"]}';
    expect(withoutMarkers(quoted)).toBe(quoted);
  });
});
