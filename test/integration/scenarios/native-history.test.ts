import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { toAnthropicConversation, toResponsesInput } from '#src/providers/index.js';
import { createCompactorSession } from '#src/session/index.js';
import type { RouteOptions } from '#src/providers/catalog.js';
import { closeAll, type FakeServer } from '#support/fake-http.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import { startFakeOpenAI, startFakeXai } from '#support/fake-openai.js';
import { agentSession, SYSTEM, templateSummary } from '#support/session/fixtures.js';

/**
 * What a native compaction leaves behind: the next window keeps the system prompt
 * the history had, and the compacted state stays representable to every later strategy (the
 * inline block's summary text travels with it, so a Local pass on another model keeps it).
 */

afterAll(freeEncoders);
const HTTP = { retries: 0, timeoutMs: 120_000 };
const KEY = { apiKeyEnv: 'FAKE_KEY', env: { FAKE_KEY: 'fake-key-0123456789' } };
const history = agentSession(100_000); // over the inline compact trigger (50,000 tokens)
const INLINE_SUMMARY = 'Summary: app.py add() fixed; pytest passes; setup.cfg untouched.';

const tmp = mkdtempSync(join(tmpdir(), 'compactor-native-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const catalog = join(tmp, 'native.json');
writeFileSync(
  catalog,
  JSON.stringify({
    providers: { openai: { nativeHosts: ['127.0.0.1'] }, xai: { nativeHosts: ['127.0.0.1'] } },
  }),
);

// The capacity of the native compactions below; a test whose session has another one declares it.
const CAPACITY = 200_000;
let oai: FakeServer;
let xai: FakeServer;
let ant: FakeServer;
beforeAll(async () => {
  oai = await startFakeOpenAI({ window: CAPACITY, summaryText: templateSummary() });
  xai = await startFakeXai({ window: CAPACITY });
  ant = await startFakeAnthropic({ window: CAPACITY, summaryText: INLINE_SUMMARY });
});
afterAll(() => closeAll(oai, xai, ant));
beforeEach(() => {
  for (const s of [oai, xai, ant]) {
    s.requests.length = 0;
    s.window = CAPACITY;
  }
});

async function compacted(route: RouteOptions, start: Message[] = history) {
  const s = createCompactorSession({ history: start, route, limits: { capacity: CAPACITY }, http: HTTP });
  const r = await s.compact();
  expect(r.status).toBe('compacted');
  return s.history;
}
const anthropic: RouteOptions = {
  provider: 'anthropic',
  model: 'claude-opus-4-6',
  baseUrl: '',
  ...KEY,
};

describe('native compaction keeps the system prompt (O3, A3)', () => {
  it.each([
    ['openai', 'gpt-5.4'],
    ['xai', 'grok-4'],
  ])(
    'O3: %s standalone: the next Responses window opens with the same developer instructions',
    async (provider, model) => {
      const after = await compacted({
        provider,
        model,
        baseUrl: provider === 'xai' ? xai.url : oai.url,
        catalogFile: catalog,
        ...KEY,
      });
      expect(after[0]).toEqual(history[0]);
      expect(toResponsesInput(after)[0]).toMatchObject({
        role: 'developer',
        content: [{ type: 'input_text', text: SYSTEM }],
      });
      expect(after.filter((m) => m.role === 'system')).toHaveLength(1);
    },
  );

  it('A3: Anthropic inline: the replayed window keeps the system prompt and opens with the block', async () => {
    const after = await compacted({ ...anthropic, baseUrl: ant.url });
    const conv = toAnthropicConversation(after);
    expect(conv.system).toBe(SYSTEM);
    expect(conv.messages[0].content[0]).toMatchObject({ type: 'compaction' });
    expect(conv.messages[0].content).toHaveLength(1); // the summary text is not sent beside the block
  });
});

describe('after inline compaction, a Local pass on another model keeps the compacted state (A3, S1)', () => {
  it('A3/S1: the Chat summary request of a model switch carries the inline summary text; the old marker is replaced', async () => {
    const after = await compacted({ ...anthropic, baseUrl: ant.url });
    // Work after the compaction, large enough that a summary shrinks it (a summary is never larger).
    const later = [...after, msg.user('Now add a lint step.'), ...agentSession(4_000).slice(2)];
    oai.window = 16_000;
    const s = createCompactorSession({
      history: later,
      route: { provider: 'openai-compatible', model: 'deepseek-chat', baseUrl: oai.url, ...KEY },
      limits: { capacity: 16_000 },
      http: HTTP,
    });
    const r = await s.compact({ mode: 'modelSwitch', previousModel: 'claude-opus-4-6' });
    expect([r.status, r.rootCause]).toEqual(['compacted', null]);
    const sent = JSON.stringify(oai.requests[0].body.messages);
    expect(sent).toContain(INLINE_SUMMARY);
    expect(sent).toContain('Now add a lint step.');
    expect(s.history.some((m) => textOf(m.content).includes('## '))).toBe(true);
    expect(s.history.some((m) => m.reasoningDetails !== undefined)).toBe(false);
  });

  it('A3/S1: the Responses summary request carries it too', async () => {
    const after = await compacted({ ...anthropic, baseUrl: ant.url });
    oai.window = 64_000;
    const s = createCompactorSession({
      history: [...after, msg.user('Now add a lint step.')],
      route: { provider: 'openai', model: 'gpt-5.4', baseUrl: oai.url, ...KEY },
      limits: { capacity: 64_000 },
      http: HTTP,
    });
    await s.compact({ mode: 'modelSwitch' });
    expect(oai.requests[0].path).toBe('/v1/responses');
    expect(JSON.stringify(oai.requests[0].body.input)).toContain(INLINE_SUMMARY);
  });
});
