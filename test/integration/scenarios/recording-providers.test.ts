import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { MAX_FAILURE_MESSAGE_CHARS } from '#machines/index.js';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import type { Message } from '#src/messages/message.js';
import { toResponsesInput } from '#src/providers/index.js';
import {
  createCompactorSession,
  type CompactorSessionOptions,
  type RequestEnvelope,
} from '#src/session/index.js';
import { isSummaryMessage } from '#src/summary/index.js';
import { closeAll, type FakeServer, type RecordedRequest } from '#support/fake-http.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import { FAKE_ENCRYPTED, startFakeOpenAI } from '#support/fake-openai.js';
import { catalogWindow } from '#support/fake-window.js';
import { agentSession, SYSTEM, templateSummary, TOOLS } from '#support/session/fixtures.js';

/**
 * Recording providers that check frozen summary prefixes, explicit output reserves and
 * impossible protocol minimums, plus the capacity-retry ladder, empty summaries, standalone
 * replay and the inline fallback — all through the session API against fake servers over real HTTP.
 */

afterAll(freeEncoders);
const history: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]
  .messages;
// No retries, so each scripted fault is seen once; a generous per-request limit so a loaded
// machine never turns a slow fake-server answer into a timeout.
const HTTP = { retries: 0, timeoutMs: 120_000 };
const MODEL = 'deepseek-chat';
const SUMMARY_LIMIT = 2_048;
/** The fake Anthropic server wants an x-api-key; the key comes from a named env var. */
const KEY = { apiKeyEnv: 'FAKE_ANTHROPIC_KEY', env: { FAKE_ANTHROPIC_KEY: 'fake-anthropic-key-0123' } };

const tmp = mkdtempSync(join(tmpdir(), 'compactor-scenarios-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
function catalog(name: string, content: object): string {
  const file = join(tmp, name);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

// The capacity of the sessions below; a test whose session has another one declares it.
const CAPACITY = 32_000;
let oai: FakeServer;
let ant: FakeServer;
beforeAll(async () => {
  oai = await startFakeOpenAI({ window: CAPACITY, summaryText: templateSummary() });
  ant = await startFakeAnthropic({ window: CAPACITY, summaryText: templateSummary() });
});
afterAll(() => closeAll(oai, ant));
beforeEach(() => {
  for (const s of [oai, ant]) {
    s.requests.length = 0;
    s.script = [];
    s.window = CAPACITY;
  }
});

const chatSession = (extra: Partial<CompactorSessionOptions> = {}) =>
  createCompactorSession({
    history,
    route: { provider: 'openai-compatible', model: MODEL, baseUrl: oai.url },
    limits: { capacity: CAPACITY, reservedOutput: 4_000, summaryOutputLimit: SUMMARY_LIMIT },
    http: HTTP,
    compaction: { retryBackoffMs: 0 },
    ...extra,
  });
const envelope = (model = MODEL): RequestEnvelope => ({
  provider: 'openai-compatible',
  model,
  system: SYSTEM,
  tools: TOOLS,
});
const chatRequests = () => oai.requests.filter((r) => r.path === '/v1/chat/completions');
const sizeOf = (r: RecordedRequest) => JSON.stringify(r.body.messages).length;

describe('recording providers: frozen prefix, output reserve, tool use (S2, L1)', () => {
  it('S2/L1: matching provider/model — the summary request starts with the parent system prompt and lists its tools with tool use disabled; max_tokens = the summary output limit', async () => {
    const s = chatSession({ envelope: envelope() });
    const r = await s.compact();
    expect(r.status).toBe('compacted');
    expect(r.usedParentContext).toBe(true);
    const [sent] = chatRequests();
    expect(sent.body.messages[0]).toEqual({ role: 'system', content: SYSTEM });
    expect(sent.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
      TOOLS.map((t) => t.name),
    );
    expect(sent.body.tool_choice).toBe('none');
    expect(sent.body.max_tokens).toBe(SUMMARY_LIMIT);
    expect(sent.body.stream).toBeUndefined();
  });

  it('S2: a different model in the envelope — no parent system prompt and no tools in the summary request', async () => {
    const s = chatSession({ envelope: envelope('deepseek-reasoner') });
    const r = await s.compact({ mode: 'targeted' });
    expect(r.status).toBe('compacted');
    expect(r.usedParentContext).toBe(false);
    const [sent] = chatRequests();
    expect(sent.body.messages.some((m: { content: string }) => m.content === SYSTEM)).toBe(false);
    expect(sent.body.tools).toBeUndefined();
    expect(sent.body.tool_choice).toBeUndefined();
    expect(sent.body.max_tokens).toBe(SUMMARY_LIMIT);
  });

  it('S2: a model switch never reuses the parent envelope, even when it matches', async () => {
    const s = chatSession({ envelope: envelope() });
    const r = await s.compact({ mode: 'modelSwitch' });
    expect(r.usedParentContext).toBe(false);
    expect(chatRequests()[0].body.tools).toBeUndefined();
  });

  it('L1: on an OpenAI route over Chat Completions the output reserve is max_completion_tokens', async () => {
    const s = createCompactorSession({
      history,
      route: {
        provider: 'openai',
        model: 'gpt-5.4',
        baseUrl: oai.url,
        catalogFile: catalog('openai-chat.json', { providers: { openai: { wire: 'chat' } } }),
      },
      limits: { capacity: CAPACITY, summaryOutputLimit: 1_500 },
      http: HTTP,
    });
    expect(s.route.strategy.kind).toBe('local'); // 127.0.0.1 is not an OpenAI native host
    expect((await s.compact()).status).toBe('compacted');
    const [sent] = chatRequests();
    expect(sent.body.max_completion_tokens).toBe(1_500);
    expect(sent.body.max_tokens).toBeUndefined();
  });

  it('S2: Anthropic Messages summary requests keep the tools with tool_choice none and max_tokens = the limit', async () => {
    const s = createCompactorSession({
      history,
      route: { provider: 'anthropic-compatible', model: 'glm-4.6', baseUrl: ant.url, ...KEY },
      envelope: { provider: 'anthropic-compatible', model: 'glm-4.6', system: SYSTEM, tools: TOOLS },
      limits: { capacity: CAPACITY, summaryOutputLimit: SUMMARY_LIMIT },
      http: HTTP,
    });
    expect((await s.compact()).status).toBe('compacted');
    const [sent] = ant.requests;
    expect(JSON.stringify(sent.body.system)).toContain(SYSTEM);
    expect(sent.body.tools.map((t: { name: string }) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect(sent.body.tool_choice).toEqual({ type: 'none' });
    expect(sent.body.max_tokens).toBe(SUMMARY_LIMIT);
    expect(sent.body.context_management).toBeUndefined();
  });
});

describe('recording providers: impossible minimums, capacity ladder, empty summaries (L3, L5, L6)', () => {
  it('L3/L6/§14: an impossible protocol minimum (the instructions alone exceed the allowance) fails with a budget error before any request; a turn says the window cannot hold the fixed part', async () => {
    oai.window = 1_000;
    const s = chatSession({ limits: { capacity: 1_000 } });
    const before = s.history;
    const manual = await s.compact();
    expect(manual.status).toBe('failed');
    expect(manual.failure?.reason).toBe('budget');
    expect(manual.rootCause).toMatch(
      /^summary budget exhausted: summary input budget \(instructions alone\) needs \d+ tokens but only \d+ are available/,
    );
    // An automatic turn cannot even build a request that fits: one configuration error first.
    await expect(s.runTurn()).rejects.toThrow(/cannot hold even the fixed part of a request/);
    expect(oai.requests).toHaveLength(0);
    expect(s.history).toBe(before);
  });

  it('L5: a capacity rejection retries once with a smaller fork, and the retry succeeds', async () => {
    oai.script.push({ kind: 'overflow', shape: 'openai-chat' });
    const s = chatSession();
    const r = await s.compact();
    expect(r.status).toBe('compacted');
    expect(r.summaryCalls).toBe(2);
    const [first, second] = chatRequests();
    expect(sizeOf(second)).toBeLessThan(sizeOf(first));
  });

  it('L5: at most maxOverflowRetries retries, each smaller than the one before; then the pass fails and history is untouched', async () => {
    oai.script.push(
      ...Array.from({ length: 5 }, () => ({ kind: 'overflow' as const, shape: 'deepseek' as const })),
    );
    const s = chatSession({ compaction: { maxOverflowRetries: 2, retryBackoffMs: 0 } });
    const before = s.history;
    const r = await s.compact();
    expect(r.status).toBe('failed');
    expect(r.failure?.reason).toBe('capacity-exhausted');
    const sent = chatRequests();
    expect(sent).toHaveLength(3);
    expect(sizeOf(sent[1])).toBeLessThan(sizeOf(sent[0]));
    expect(sizeOf(sent[2])).toBeLessThan(sizeOf(sent[1]));
    expect(s.history).toBe(before);
  });

  it('L6/S4/R1: an empty summary fails with "provider returned an empty summary"; history and the store are untouched', async () => {
    oai.script.push({ kind: 'empty-summary' });
    const dir = join(tmp, 'empty-summary-session');
    const s = chatSession({ history: undefined, sessionDir: dir });
    s.append(...history);
    const before = s.history;
    const events = s.store!.events().length;
    const r = await s.compact();
    expect(r.status).toBe('failed');
    expect(r.rootCause).toContain('provider returned an empty summary');
    expect(r.message).toContain('history unchanged');
    expect(r.boundary).toBeNull();
    expect(s.history).toBe(before);
    expect(s.store!.events()).toHaveLength(events);
    expect(s.store!.listBoundaries()).toHaveLength(0);
    s.close();
  });

  it('S4: a provider error shows a bounded root cause without the JSON body', async () => {
    oai.script.push({
      kind: 'status',
      status: 400,
      body: {
        error: { message: 'bad request: field x', type: 'invalid_request_error', secret_trace: 'TRACE-123' },
      },
    });
    const r = await chatSession().compact();
    expect(r.status).toBe('failed');
    expect(r.rootCause).toContain('bad request: field x');
    expect(r.rootCause).not.toContain('TRACE-123');
    expect(r.rootCause).not.toContain('{');
    expect(r.rootCause!.length).toBeLessThanOrEqual(MAX_FAILURE_MESSAGE_CHARS);
  });
});

describe('native strategies through the session (S1, O3, A4)', () => {
  it('O3: NativeStandalone (catalog trusts 127.0.0.1) replaces history with the returned items, replayed verbatim', async () => {
    oai.window = catalogWindow('openai', 'gpt-5.4'); // no capacity given: the model's window
    const s = createCompactorSession({
      history,
      route: {
        provider: 'openai',
        model: 'gpt-5.4',
        baseUrl: oai.url,
        catalogFile: catalog('native.json', { providers: { openai: { nativeHosts: ['127.0.0.1'] } } }),
      },
      http: HTTP,
    });
    expect(s.route.strategy.kind).toBe('nativeStandalone');
    const r = await s.compact({ instructions: 'Keep the bug id.' });
    expect(r.status).toBe('compacted');
    expect(r.strategy).toBe('nativeStandalone');
    const [sent] = oai.requests;
    expect(sent.path).toBe('/v1/responses/compact');
    expect(sent.body.instructions).toBe('Keep the bug id.');
    expect(sent.body.max_output_tokens).toBeUndefined();
    const item = {
      id: 'cmp_01',
      type: 'compaction',
      encrypted_content: FAKE_ENCRYPTED,
      future_field: { kept: true },
    };
    expect(s.history.some((m) => isSummaryMessage(m))).toBe(false); // no local rebuild
    expect(toResponsesInput([...s.history])).toContainEqual(item);
    expect(r.itemsAfter).toBe(s.history.length);
  });

  it('A4: NativeInline with a null-content compaction block falls back to a Local summary', async () => {
    ant.script.push({ kind: 'compaction-null' });
    ant.window = 200_000;
    const s = createCompactorSession({
      history: agentSession(100_000), // over the inline compact trigger (50,000 tokens)
      route: { provider: 'anthropic', model: 'claude-opus-4-6', baseUrl: ant.url, ...KEY },
      limits: { capacity: 200_000 },
      http: HTTP,
    });
    expect(s.route.strategy.kind).toBe('nativeInline');
    const r = await s.compact();
    expect(r).toMatchObject({
      status: 'compacted',
      requestedStrategy: 'nativeInline',
      strategy: 'local',
      fallbackReason: 'null-content',
    });
    expect(ant.requests).toHaveLength(2);
    expect(ant.requests[0].body.context_management).toBeDefined();
    expect(ant.requests[1].body.context_management).toBeUndefined();
    expect(isSummaryMessage(s.history.find((m) => m.role !== 'system')!)).toBe(true);
  });
});
