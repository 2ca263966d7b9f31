import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { resolveRoute, type ResolvedRoute } from '#src/providers/catalog.js';
import { ContextCapacityError, EmptySummaryError, ProviderError } from '#src/core/errors.js';
import type { HttpOptions } from '#src/providers/http.js';
import { createSummaryClient } from '#src/providers/clients.js';
import type { SummaryRequest, ToolSchema } from '#src/providers/types.js';
import type { Fault, OverflowShape } from '#support/fake-http.js';
import { useFakeProviders } from '#support/fake-providers.js';
import { catalogWindow } from '#support/fake-window.js';

const KEY = 'zz-secret-9f8e7d6c5b4a3210';
const ENV = { FAKE_PROVIDER_KEY: KEY };
const FAST: HttpOptions = { minRetryDelayMs: 1, maxRetryDelayMs: 5, retries: 1, timeoutMs: 120_000 };
const tools: ToolSchema[] = [{ name: 'shell', parameters: { type: 'object' } }];
const messages: Message[] = [
  msg.user('Run the tests.'),
  msg.assistant('', [{ id: 'call_A1', name: 'shell', arguments: '{"cmd":"npm test"}' }]),
  msg.tool('call_A1', '12 passing'),
];
const request = (model: string, extra: Partial<SummaryRequest> = {}): SummaryRequest => ({
  model,
  system: 'SYS',
  tools,
  messages,
  instructions: 'Summarize the session.',
  ...extra,
});

// The routes below have no capacity of their own: the fakes declare the smallest model window
// they serve (deepseek-chat is not in the catalog; DeepSeek's window is 131,072).
const DEEPSEEK_WINDOW = 131_072;
const fakes = useFakeProviders({
  window: Math.min(DEEPSEEK_WINDOW, catalogWindow('anthropic', 'claude-opus-4-6')),
});

type Wire = 'chat' | 'responses' | 'messages';
function routeFor(wire: Wire, streamingOnly = false): ResolvedRoute {
  const r =
    wire === 'messages'
      ? resolveRoute(
          {
            provider: 'anthropic-compatible',
            model: 'claude-opus-4-6',
            baseUrl: fakes.ant.url,
            apiKeyEnv: 'FAKE_PROVIDER_KEY',
          },
          ENV,
        )
      : wire === 'chat'
        ? resolveRoute(
            {
              provider: 'openai-compatible',
              model: 'deepseek-chat',
              baseUrl: fakes.oai.url,
              apiKeyEnv: 'FAKE_PROVIDER_KEY',
            },
            ENV,
          )
        : resolveRoute(
            { provider: 'openai', model: 'gpt-5.4', baseUrl: fakes.oai.url, apiKeyEnv: 'FAKE_PROVIDER_KEY' },
            ENV,
          );
  return { ...r, streamingOnly };
}
const serverOf = (w: Wire) => (w === 'messages' ? fakes.ant : fakes.oai);
const last = (w: Wire) => serverOf(w).requests[serverOf(w).requests.length - 1];
const run = (w: Wire, stream: boolean, faults: Fault[] = [], extra: Partial<SummaryRequest> = {}) => {
  serverOf(w).script.push(...faults);
  return createSummaryClient(routeFor(w, stream), FAST).summarize(request(routeFor(w).model, extra));
};

describe('Local summary request shapes (S2)', () => {
  it('S2: Chat Completions lists tools with tool_choice "none"; instructions go last', async () => {
    const r = await run('chat', false, [], { maxOutputTokens: 900 });
    expect(r).toEqual({
      text: 'Summary: tests pass; lint step requested.',
      finishReason: 'stop',
      usage: { inputTokens: 812, outputTokens: 25, cachedInputTokens: 768 },
    });
    const b = last('chat');
    expect(b.path).toBe('/v1/chat/completions');
    expect(b.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(b.body.tool_choice).toBe('none');
    expect(b.body.tools).toEqual([
      { type: 'function', function: { name: 'shell', parameters: { type: 'object' } } },
    ]);
    expect(b.body.max_tokens).toBe(900);
    expect(b.body).not.toHaveProperty('stream');
    expect(b.body.messages[0]).toEqual({ role: 'system', content: 'SYS' });
    expect(b.body.messages.at(-1)).toEqual({ role: 'user', content: 'Summarize the session.' });
    expect(b.body.messages[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_A1', type: 'function', function: { name: 'shell', arguments: '{"cmd":"npm test"}' } },
      ],
    });
  });

  it('S2: Anthropic Messages lists tools with tool_choice {type:"none"} and no beta header', async () => {
    const r = await run('messages', false);
    expect(r.finishReason).toBe('stop');
    expect(r.usage).toEqual({ inputTokens: 21500, outputTokens: 800, cachedInputTokens: 500 });
    const b = last('messages');
    expect(b.body.tool_choice).toEqual({ type: 'none' });
    expect(b.body.system).toBe('SYS');
    expect(b.headers['anthropic-beta']).toBeUndefined();
    expect(b.body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_A1', content: '12 passing' },
        { type: 'text', text: 'Summarize the session.' },
      ],
    });
  });

  it('S2: Responses lists tools with tool_choice "none", store false, system as instructions', async () => {
    await run('responses', false, [], { maxOutputTokens: 700 });
    const b = last('responses');
    expect(b.path).toBe('/v1/responses');
    expect(b.body).toMatchObject({
      tool_choice: 'none',
      store: false,
      instructions: 'SYS',
      max_output_tokens: 700,
    });
    expect(b.body.tools).toEqual([
      { type: 'function', name: 'shell', parameters: { type: 'object' }, strict: false },
    ]);
  });

  it('S2: without tools neither tools nor tool_choice is sent', async () => {
    await run('chat', false, [], { tools: [] });
    expect(last('chat').body).not.toHaveProperty('tools');
    expect(last('chat').body).not.toHaveProperty('tool_choice');
  });
});

describe.each(['chat', 'messages', 'responses'] as Wire[])('summary over %s', (wire) => {
  for (const stream of [false, true]) {
    const mode = stream ? 'SSE' : 'JSON';
    it(`L6 (${mode}): a summary comes back as one response`, async () => {
      const r = await run(wire, stream);
      expect(r.text).toContain('Summary: tests pass');
      expect(r.finishReason).toBe('stop');
      expect(last(wire).body.stream === true).toBe(stream);
    });
    it(`L6 (${mode}): an empty summary is an EmptySummaryError`, async () => {
      const err = await run(wire, stream, [{ kind: 'empty-summary' }]).catch((e) => e);
      expect(err).toBeInstanceOf(EmptySummaryError);
      expect(err.message).toBe('provider returned an empty summary');
      expect(err.info.model).toBe(routeFor(wire).model);
    });
    it(`§14 (${mode}): a summary cut by the output limit reports finishReason length`, async () => {
      expect((await run(wire, stream, [{ kind: 'length' }])).finishReason).toBe('length');
    });
  }

  it('S4 (SSE): a truncated stream is retried, then reported', async () => {
    const before = serverOf(wire).requests.length;
    const err = await run(wire, true, [{ kind: 'truncated-stream' }, { kind: 'truncated-stream' }]).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.info.code).toBe('stream_truncated');
    expect(serverOf(wire).requests.length - before).toBe(2);
    // One truncation then a whole stream succeeds.
    expect((await run(wire, true, [{ kind: 'truncated-stream' }])).text).toContain('Summary');
  });

  it('L5 (SSE): a context overflow inside the stream is a ContextCapacityError', async () => {
    const shape = wire === 'messages' ? 'anthropic' : wire === 'chat' ? 'chat' : 'responses-nested';
    const err = await run(wire, true, [{ kind: 'stream-overflow', shape }]).catch((e) => e);
    expect(err).toBeInstanceOf(ContextCapacityError);
  });

  it('S4 (SSE): a transient error event mid-stream is retried', async () => {
    const before = serverOf(wire).requests.length;
    const r = await run(wire, true, [
      { kind: 'stream-error', ...(wire === 'messages' ? { errorType: 'overloaded_error' } : {}) },
    ]).catch((e) => e);
    // Chat: OpenRouter-style `{error:{code:502}}` carries only a numeric code, classified by it.
    expect(r.text).toContain('Summary');
    expect(serverOf(wire).requests.length - before).toBe(2);
  });

  it('S4: malformed bodies are ProviderErrors naming the field', async () => {
    const err = await run(wire, false, [{ kind: 'bad-shape' }]).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.message).toMatch(/malformed .* response: field (choices|content|output)/);
  });
});

describe('OpenRouter numeric error codes inside the stream (S4)', () => {
  it.each([
    [429, 2],
    [502, 2],
    ['503', 2],
    [400, 1],
  ])('S4 (SSE): {"error":{"code":%p}} is classified by its code (%i request(s))', async (code, requests) => {
    const before = fakes.oai.requests.length;
    const r = await run('chat', true, [{ kind: 'stream-error', code }]).catch((e) => e);
    expect(fakes.oai.requests.length - before).toBe(requests);
    if (requests === 2) expect(r.text).toContain('Summary');
    else expect(r).toBeInstanceOf(ProviderError);
  });
});

describe('context-capacity rejections from every provider shape (L5)', () => {
  const shapes: [Wire, OverflowShape, number | undefined][] = [
    ['chat', 'openai-chat', 4294],
    ['chat', 'deepseek', 122942],
    ['chat', 'vllm', 37552],
    ['chat', 'gemini', 1200293],
    ['chat', 'openrouter', 42832],
    ['chat', 'groq', undefined],
    ['chat', 'xai', 136973],
    ['responses', 'openai-responses', undefined],
    ['messages', 'anthropic', 219898],
    ['messages', 'anthropic-413', undefined],
  ];
  it.each(shapes)(
    'L5: %s / %s → ContextCapacityError (inputTokens %s), one request, no secret',
    async (wire, shape, tokens) => {
      const before = serverOf(wire).requests.length;
      const err = await run(wire, false, [{ kind: 'overflow', shape }]).catch((e) => e);
      expect(err).toBeInstanceOf(ContextCapacityError);
      expect(err.info.inputTokens).toBe(tokens);
      expect(serverOf(wire).requests.length - before).toBe(1);
      expect(err.message).not.toContain(KEY);
    },
  );

  it('L5: responses stream flat error and response.failed shapes are both recognised', async () => {
    for (const shape of ['responses-flat', 'responses-failed'] as const) {
      const err = await run('responses', true, [{ kind: 'stream-overflow', shape }]).catch((e) => e);
      expect([shape, err instanceof ContextCapacityError]).toEqual([shape, true]);
    }
  });
});
