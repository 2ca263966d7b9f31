import { describe, expect, it, jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { msg, type Message } from '#src/messages/message.js';
import { resolveRoute } from '#src/providers/catalog.js';
import { createInlineClient } from '#src/providers/anthropic/inline-client.js';
import { createStandaloneClient } from '#src/providers/openai-responses/compact-client.js';
import { createSummaryClient } from '#src/providers/clients.js';
import type { ToolSchema } from '#src/providers/types.js';
import type { FakeServer } from '#support/fake-http.js';
import { useFakeProviders } from '#support/fake-providers.js';
import { catalogWindow } from '#support/fake-window.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/**
 * Request contract: every kind of request body Compactor sends is recorded from the
 * fake servers into test/fixtures/contract/*.ts, each typed with `satisfies` against the
 * official SDK's request params (`openai`, `@anthropic-ai/sdk`). `npm run typecheck` checks
 * them, so a field the real API would reject fails `npm test`; this test fails when a recorded
 * body no longer matches its fixture. Regenerate with UPDATE_CONTRACT=1 after a deliberate change.
 */

const DIR = join(process.cwd(), 'test', 'fixtures', 'contract');
const FAST = { minRetryDelayMs: 1, maxRetryDelayMs: 5, retries: 2, timeoutMs: 120_000 };
const ENV = { FAKE_KEY: 'fake-key-0123456789' };
const tools: ToolSchema[] = [
  {
    name: 'shell',
    description: 'Run a command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  },
];
const history: Message[] = [
  msg.system('You are a build agent.'),
  msg.user('Run the tests.'),
  msg.assistant('Running them.', [{ id: 'call_A1', name: 'shell', arguments: '{"cmd":"npm test"}' }]),
  msg.tool('call_A1', '12 passing', 'shell'),
  msg.user('Now add a lint step.'),
];
const caller = {
  prompt_cache_key: 'sess-42',
  service_tier: 'flex',
  safety_identifier: 'user-7',
  metadata: { user_id: 'user-7' },
  thinking: { type: 'enabled', budget_tokens: 2_048 },
};

/** The SDK type each fixture must satisfy. */
const TYPES = {
  chat: ["import type OpenAI from 'openai';", 'OpenAI.Chat.ChatCompletionCreateParams'],
  responses: ["import type OpenAI from 'openai';", 'OpenAI.Responses.ResponseCreateParams'],
  compact: ["import type OpenAI from 'openai';", 'OpenAI.Responses.ResponseCompactParams'],
  messages: ["import type Anthropic from '@anthropic-ai/sdk';", 'Anthropic.MessageCreateParams'],
  inline: ["import type Anthropic from '@anthropic-ai/sdk';", 'Anthropic.Beta.Messages.MessageCreateParams'],
} as const;
type Kind = keyof typeof TYPES;

function fixtureText(kind: Kind, body: unknown): string {
  const [imp, type] = TYPES[kind];
  return [
    '// Recorded by test/contract/request-contract.test.ts (UPDATE_CONTRACT=1); do not edit.',
    imp,
    '',
    `export const body = ${JSON.stringify(body, null, 2)} satisfies ${type};`,
    '',
  ].join('\n');
}

async function checkFixture(name: string, kind: Kind, body: unknown): Promise<void> {
  const file = join(DIR, `${name}.ts`);
  if (process.env.UPDATE_CONTRACT === '1' || !existsSync(file)) {
    writeFileSync(file, fixtureText(kind, body));
    execFileSync('npx', ['prettier', '--write', file], { stdio: 'ignore' });
  }
  const fixture = (await import(file)) as { body: unknown };
  expect(body).toEqual(fixture.body);
}

// Each route works with its catalog window (deepseek-chat is not in the catalog; DeepSeek's
// window is 131,072): the fakes declare the smallest one they serve.
const fakes = useFakeProviders({ window: Math.min(131_072, catalogWindow('anthropic', 'claude-opus-4-6')) });
const lastBody = (srv: FakeServer) => srv.requests[srv.requests.length - 1].body as unknown;
const route = (provider: string, model: string, baseUrl: string) =>
  resolveRoute({ provider, model, baseUrl, apiKeyEnv: 'FAKE_KEY' }, ENV);
const summaryRequest = (model: string) => ({
  model,
  system: 'You are a build agent.',
  tools,
  messages: history.slice(1),
  instructions: 'Summarize the session.',
  maxOutputTokens: 1_024,
  requestFields: caller,
});

describe('request bodies satisfy the official SDK request types (contract)', () => {
  it('contract: Chat Completions summary request', async () => {
    await createSummaryClient(route('openai-compatible', 'deepseek-chat', fakes.oai.url), FAST).summarize(
      summaryRequest('deepseek-chat'),
    );
    await checkFixture('chat-summary', 'chat', lastBody(fakes.oai));
  });

  it('contract: Responses summary request', async () => {
    await createSummaryClient(route('openai', 'gpt-5.4', fakes.oai.url), FAST).summarize(
      summaryRequest('gpt-5.4'),
    );
    await checkFixture('responses-summary', 'responses', lastBody(fakes.oai));
  });

  it('O1/O2 contract: /responses/compact request', async () => {
    await createStandaloneClient(route('openai', 'gpt-5.4', fakes.oai.url), FAST).compactStandalone({
      model: 'gpt-5.4',
      input: history,
      instructions: 'Keep exact commands.',
      requestFields: caller,
    });
    await checkFixture('responses-compact', 'compact', lastBody(fakes.oai));
  });

  it('contract: Anthropic Messages summary request', async () => {
    await createSummaryClient(route('anthropic', 'claude-opus-4-6', fakes.ant.url), FAST).summarize(
      summaryRequest('claude-opus-4-6'),
    );
    await checkFixture('messages-summary', 'messages', lastBody(fakes.ant));
  });

  it('A1 contract: Anthropic inline compaction request (beta context management)', async () => {
    await createInlineClient(route('anthropic', 'claude-opus-4-6', fakes.ant.url), FAST).compactInline({
      model: 'claude-opus-4-6',
      system: 'You are a build agent.',
      tools,
      messages: history,
      supportsContextEdits: true,
      instructions: 'Keep exact commands.',
      requestFields: caller,
    });
    await checkFixture('messages-inline', 'inline', lastBody(fakes.ant));
  });
});
