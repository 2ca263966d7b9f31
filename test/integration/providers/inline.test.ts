import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { resolveRoute, type ResolvedRoute } from '#src/providers/catalog.js';
import { ContextCapacityError, ProviderError } from '#src/core/errors.js';
import { createProviderClients } from '#src/providers/clients.js';
import type { HttpOptions } from '#src/providers/http.js';
import { createInlineClient } from '#src/providers/anthropic/inline-client.js';
import type { ToolSchema } from '#src/providers/types.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import { catalogWindow } from '#support/fake-window.js';

const KEY = 'sk-ant-FAKEKEY0123456789abcdef';
const FAST: HttpOptions = { minRetryDelayMs: 1, maxRetryDelayMs: 5, retries: 2, timeoutMs: 120_000 };
const tools: ToolSchema[] = [
  {
    name: 'shell',
    description: 'Run a command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  },
];
const history: Message[] = [
  msg.user('Run the tests.'),
  msg.assistant('', [{ id: 'toolu_01', name: 'shell', arguments: '{"cmd":"npm test"}' }], {
    reasoningDetails: [{ type: 'thinking', thinking: 'Run npm test first.', signature: 'EqQB-sig' }],
  }),
  msg.tool('toolu_01', '12 passing'),
  msg.user('Now add a lint step.'),
];

let srv: FakeServer;
let route: ResolvedRoute;
beforeAll(async () => {
  srv = await startFakeAnthropic({ window: catalogWindow('anthropic', 'claude-opus-4-6') });
  route = resolveRoute(
    { provider: 'anthropic', model: 'claude-opus-4-6', baseUrl: srv.url },
    { ANTHROPIC_API_KEY: KEY },
  );
});
afterAll(() => srv.close());
const last = () => srv.requests[srv.requests.length - 1];
const req = (supportsContextEdits = true) => ({
  model: 'claude-opus-4-6',
  system: 'You are a build agent.',
  tools,
  messages: history,
  supportsContextEdits,
});

describe('NativeInline over HTTP (A1–A5)', () => {
  it('A1/A2: the edit ladder in order, betas derived by the client, tools listed with tool use off', async () => {
    // clear_thinking needs thinking on; the caller's thinking config is kept.
    const thinking = { type: 'enabled', budget_tokens: 1_024 };
    const r = await createInlineClient(route, FAST).compactInline({ ...req(), requestFields: { thinking } });
    expect(r.kind).toBe('compacted');
    const sent = last();
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['anthropic-beta']).toBe('compact-2026-01-12,context-management-2025-06-27');
    expect(sent.body.context_management).toEqual({
      edits: [
        { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 2 } },
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'input_tokens', value: 100000 },
          keep: { type: 'tool_uses', value: 3 },
        },
        {
          type: 'compact_20260112',
          trigger: { type: 'input_tokens', value: 50000 },
          pause_after_compaction: true,
        },
      ],
    });
    expect(sent.body.tool_choice).toEqual({ type: 'none' });
    expect(sent.body.tools).toEqual([
      { name: 'shell', description: 'Run a command', input_schema: tools[0].parameters },
    ]);
    expect(sent.body.system).toBe('You are a build agent.');
    expect(sent.body.thinking).toEqual(thinking);
    expect(sent.body).not.toHaveProperty('stream');
    expect(sent.body.messages[1].content[0]).toEqual({
      type: 'thinking',
      thinking: 'Run npm test first.',
      signature: 'EqQB-sig',
    });
  });

  it('A1/A2: without context-edit support only the compact edit and its beta are sent', async () => {
    await createInlineClient(route, FAST).compactInline(req(false));
    expect(last().body.context_management.edits.map((e: { type: string }) => e.type)).toEqual([
      'compact_20260112',
    ]);
    expect(last().headers['anthropic-beta']).toBe('compact-2026-01-12');
  });

  it('A3/A5: the raw block is stored in reasoningDetails and replayed first next time; usage from iterations', async () => {
    const r = await createInlineClient(route, FAST).compactInline(req());
    if (r.kind !== 'compacted') throw new Error('expected compaction');
    const block = {
      type: 'compaction',
      content: '<summary>Summary: tests pass; lint step requested.</summary>',
      encrypted_content: null,
      future_field: { kept: true },
    };
    // The summary text travels with the block (content), marked so Anthropic replays the block alone.
    expect(r.messages).toEqual([
      {
        role: 'assistant',
        content: block.content,
        reasoningDetails: [block],
        metadata: { nativeSummary: true },
      },
    ]);
    expect(r.usage).toEqual({ inputTokens: 162000, outputTokens: 3100, cachedInputTokens: 0 });
    // Next request: the summary client replays the block as the first Anthropic message with the compact beta.
    const { summary } = createProviderClients(route, FAST);
    const next = [...history, ...r.messages, msg.user('continue')];
    await summary.summarize({ model: 'claude-opus-4-6', messages: next, instructions: 'Summarize.', tools });
    const sent = last();
    expect(sent.body.messages[0]).toEqual({ role: 'assistant', content: [block] });
    expect(sent.body.messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'continue' },
        { type: 'text', text: 'Summarize.' },
      ],
    });
    expect(sent.headers['anthropic-beta']).toBe('compact-2026-01-12');
    expect(sent.body.tool_choice).toEqual({ type: 'none' });
  });

  it('A4: content null, no compaction block, and a rejected edit fall back to Local', async () => {
    const c = createInlineClient(route, FAST);
    srv.script.push({ kind: 'compaction-null' });
    expect(await c.compactInline(req())).toMatchObject({ kind: 'fallback', reason: 'null-content' });
    srv.script.push({ kind: 'no-compaction' });
    expect(await c.compactInline(req())).toMatchObject({ kind: 'fallback', reason: 'no-compaction' });
    srv.script.push({ kind: 'rejected-edit' });
    const before = srv.requests.length;
    const rej = await c.compactInline(req());
    expect(rej).toMatchObject({ kind: 'fallback', reason: 'rejected-edit' });
    expect(srv.requests.length - before).toBe(1);
  });

  it('L5: prompt-too-long is a ContextCapacityError with inputTokens, not a fallback', async () => {
    srv.script.push({ kind: 'overflow', shape: 'anthropic' });
    const err = await createInlineClient(route, FAST)
      .compactInline(req())
      .catch((e) => e);
    expect(err).toBeInstanceOf(ContextCapacityError);
    expect(err.info.inputTokens).toBe(219898);
  });

  it('S4: 529 overloaded is retried; 429 honours retry-after (seconds)', async () => {
    srv.script.push({
      kind: 'status',
      status: 529,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    srv.script.push({ kind: 'rate-limit', retryAfter: '0' });
    const before = srv.requests.length;
    const r = await createInlineClient(route, FAST).compactInline(req());
    expect(r.kind).toBe('compacted');
    expect(srv.requests.length - before).toBe(3);
  });

  it('A3: streaming-only routes fold compaction_delta into the same raw block', async () => {
    const streaming = { ...route, streamingOnly: true };
    const r = await createInlineClient(streaming, FAST).compactInline(req());
    expect(last().body.stream).toBe(true);
    expect(r).toMatchObject({
      kind: 'compacted',
      messages: [
        {
          reasoningDetails: [
            { type: 'compaction', content: '<summary>Summary: tests pass; lint step requested.</summary>' },
          ],
        },
      ],
    });
  });

  it('S1: the factory gives Anthropic Opus an inline client, older Sonnet none', () => {
    expect(createProviderClients(route).inline).toBeDefined();
    const old = resolveRoute(
      { provider: 'anthropic', model: 'claude-sonnet-4-5', baseUrl: srv.url },
      { ANTHROPIC_API_KEY: KEY },
    );
    const c = createProviderClients(old);
    expect(c.strategy.kind).toBe('local');
    expect(c.inline).toBeUndefined();
  });

  it('S4: no secret in any error message', async () => {
    srv.script.push({
      kind: 'status',
      status: 403,
      body: { type: 'error', error: { type: 'permission_error', message: `key ${KEY} is not allowed` } },
    });
    const err = await createInlineClient(route, FAST)
      .compactInline(req())
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.message).not.toContain(KEY);
    expect(err.message).toContain('permission_error');
  });
});
