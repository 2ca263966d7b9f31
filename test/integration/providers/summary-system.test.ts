import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { resolveBudgets } from '#src/projection/index.js';
import { resolveRoute, type ResolvedRoute } from '#src/providers/catalog.js';
import type { HttpOptions } from '#src/providers/http.js';
import { createSummaryClient } from '#src/providers/clients.js';
import { createLocalSummarizer } from '#src/runtime/index.js';
import { useFakeProviders } from '#support/fake-providers.js';

/**
 * The system prompt of a Local summary request: sent once, in the wire's own slot
 * (Chat `system` message, Anthropic `system`, Responses top-level `instructions`), never a
 * second time inside the transcript.
 */

afterAll(freeEncoders);
const est = createEstimator();
const ENV = { FAKE_PROVIDER_KEY: 'zz-secret-9f8e7d6c5b4a3210' };
const FAST: HttpOptions = { minRetryDelayMs: 1, maxRetryDelayMs: 5, retries: 1, timeoutMs: 120_000 };
const SYSTEM = 'You are a build agent. Never touch prod.';
const history: Message[] = [
  msg.system(SYSTEM),
  msg.user('Run the tests.'),
  msg.assistant('', [{ id: 'call_A1', name: 'shell', arguments: '{"cmd":"npm test"}' }]),
  msg.tool('call_A1', '12 passing'),
  msg.user('Now add a lint step.'),
  msg.assistant('Added the lint step.'),
];

const PROVIDER_LIMIT = 128_000; // the summarizer's capacity below: the fakes hold requests to it
const fakes = useFakeProviders({ window: PROVIDER_LIMIT });

type Wire = 'chat' | 'responses' | 'messages';
function routeFor(wire: Wire): ResolvedRoute {
  if (wire === 'messages')
    return resolveRoute(
      {
        provider: 'anthropic-compatible',
        model: 'claude-opus-4-6',
        baseUrl: fakes.ant.url,
        apiKeyEnv: 'FAKE_PROVIDER_KEY',
      },
      ENV,
    );
  return resolveRoute(
    wire === 'chat'
      ? {
          provider: 'openai-compatible',
          model: 'deepseek-chat',
          baseUrl: fakes.oai.url,
          apiKeyEnv: 'FAKE_PROVIDER_KEY',
        }
      : { provider: 'openai', model: 'gpt-5.4', baseUrl: fakes.oai.url, apiKeyEnv: 'FAKE_PROVIDER_KEY' },
    ENV,
  );
}

async function summarize(wire: Wire, system?: string) {
  const route = routeFor(wire);
  const s = createLocalSummarizer({
    client: createSummaryClient(route, FAST),
    estimator: est,
    budgets: resolveBudgets({ capacity: PROVIDER_LIMIT }),
    model: route.model,
    ...(system !== undefined ? { system } : {}),
  });
  const srv = wire === 'messages' ? fakes.ant : fakes.oai;
  await s.request(s.prepare(history, 100_000), 'flat', new AbortController().signal);
  return srv.requests[srv.requests.length - 1].body;
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe('Local summary request: the system prompt goes out once (S2)', () => {
  it.each(['chat', 'responses', 'messages'] as const)(
    'S2: %s: with the parent system prompt, the leading system message is not repeated in the transcript',
    async (wire) => {
      const body = await summarize(wire, SYSTEM);
      expect(count(JSON.stringify(body), SYSTEM)).toBe(1);
    },
  );

  it.each(['chat', 'responses', 'messages'] as const)(
    'S2: %s: without parent context the history system prompt is still sent once',
    async (wire) => {
      const body = await summarize(wire);
      expect(count(JSON.stringify(body), SYSTEM)).toBe(1);
    },
  );

  it('S2: Responses: the history system prompt is sent as top-level instructions, not a developer input item', async () => {
    const body = await summarize('responses');
    expect(body.instructions).toBe(SYSTEM);
    expect(body.input.some((i: { role?: string }) => i.role === 'developer' || i.role === 'system')).toBe(
      false,
    );
  });

  it('S2: Anthropic and Chat put it in their system slot', async () => {
    expect((await summarize('messages')).system).toBe(SYSTEM);
    expect((await summarize('chat')).messages[0]).toEqual({ role: 'system', content: SYSTEM });
  });
});
