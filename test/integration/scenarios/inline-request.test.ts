import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import type { Json } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import { estimateBodyTokens, requestedOutputTokens } from '#support/fake-window.js';
import { agentSession, templateSummary } from '#support/session/fixtures.js';

/**
 * The Anthropic inline compaction request built for a session: `--instructions` go in the
 * compact edit's `instructions`; `clear_thinking` is sent only when the caller has thinking on,
 * and the caller's `thinking` config is kept (the real API rejects clear_thinking without it).
 */

afterAll(freeEncoders);
const HTTP = { retries: 0, timeoutMs: 120_000 };
const KEY = { apiKeyEnv: 'FAKE_KEY', env: { FAKE_KEY: 'fake-key-0123456789' } };

const CAPACITY = 200_000; // the sessions' capacity: the fake holds requests to it
let ant: FakeServer;
beforeAll(async () => {
  ant = await startFakeAnthropic({ window: CAPACITY, summaryText: templateSummary() });
});
afterAll(() => ant.close());
beforeEach(() => {
  ant.requests.length = 0;
  ant.window = CAPACITY;
});

async function compact(opts: { instructions?: string; requestFields?: Record<string, Json> } = {}) {
  const s = createCompactorSession({
    history: agentSession(100_000), // over the inline compact trigger (50,000 tokens)
    route: { provider: 'anthropic', model: 'claude-opus-4-6', baseUrl: ant.url, ...KEY },
    limits: { capacity: CAPACITY },
    http: HTTP,
    ...(opts.requestFields
      ? { envelope: { provider: 'anthropic', model: 'claude-opus-4-6', requestFields: opts.requestFields } }
      : {}),
  });
  const report = await s.compact(opts.instructions ? { instructions: opts.instructions } : {});
  return { report, body: ant.requests[0].body };
}
const editTypes = (body: { context_management: { edits: { type: string }[] } }) =>
  body.context_management.edits.map((e) => e.type);

describe('Anthropic inline request (A1)', () => {
  it('A1: --instructions are sent in the compact edit', async () => {
    const { report, body } = await compact({ instructions: 'Keep the bug id.' });
    expect(report.strategy).toBe('nativeInline');
    expect(body.context_management.edits.at(-1)).toMatchObject({
      type: 'compact_20260112',
      instructions: 'Keep the bug id.',
    });
  });

  it('A1: without thinking no clear_thinking edit and no thinking config; the compaction is native', async () => {
    const { report, body } = await compact();
    expect(editTypes(body)).toEqual(['clear_tool_uses_20250919', 'compact_20260112']);
    expect(body).not.toHaveProperty('thinking');
    expect(report).toMatchObject({ status: 'compacted', strategy: 'nativeInline' });
  });

  it("A1: the caller's thinking config is kept, clear_thinking leads the ladder, max_tokens exceeds the thinking budget", async () => {
    const thinking = { type: 'enabled', budget_tokens: 8_000 };
    const { report, body } = await compact({ requestFields: { thinking } });
    expect(body.thinking).toEqual(thinking);
    expect(editTypes(body)).toEqual([
      'clear_thinking_20251015',
      'clear_tool_uses_20250919',
      'compact_20260112',
    ]);
    expect(body.max_tokens).toBeGreaterThan(8_000);
    expect(report).toMatchObject({ status: 'compacted', strategy: 'nativeInline' });
  });
});

describe('the inline request fits the window with the thinking budget it asks for (L1, A1)', () => {
  it("L1/A1: with the caller's thinking on, max_tokens (thinking budget plus the answer) is subtracted from the inline input, so the request fits the capacity", async () => {
    const capacity = 100_000;
    ant.window = capacity;
    const thinking = { type: 'enabled', budget_tokens: 30_000 };
    const s = createCompactorSession({
      history: agentSession(200_000), // bounded down to the inline allowance
      route: { provider: 'anthropic', model: 'claude-opus-4-6', baseUrl: ant.url, ...KEY },
      limits: { capacity },
      http: HTTP,
      envelope: { provider: 'anthropic', model: 'claude-opus-4-6', requestFields: { thinking } },
    });
    const report = await s.compact();
    expect(ant.violations).toEqual([]);
    expect(report).toMatchObject({ status: 'compacted', strategy: 'nativeInline' });
    const body = ant.requests[0].body;
    expect(body.thinking).toEqual(thinking);
    expect(body.max_tokens).toBeGreaterThan(30_000);
    expect(estimateBodyTokens(body) + requestedOutputTokens(body)).toBeLessThanOrEqual(capacity);
  });
});
