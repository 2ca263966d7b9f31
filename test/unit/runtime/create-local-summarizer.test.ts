import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { textOf, type Message } from '#src/messages/message.js';
import { resolveBudgets } from '#src/projection/index.js';
import { resolveRoute } from '#src/providers/catalog.js';
import { BudgetError, ContextCapacityError, ProviderError } from '#src/core/errors.js';
import { createSummaryClient } from '#src/providers/clients.js';
import type { SummaryClient, SummaryRequest } from '#src/providers/types.js';
import { createLocalSummarizer, type LocalSummarizerOptions } from '#src/runtime/index.js';
import {
  createOfflineSummarizer,
  defaultReinjectBudget,
  isSummaryMessage,
  loadSummaryPrompt,
} from '#src/summary/index.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import { estimateBodyTokens, requestedOutputTokens } from '#support/fake-window.js';
import { agentSession, SYSTEM, templateSummary, TOOLS } from '#support/session/fixtures.js';

afterAll(freeEncoders);
const est = createEstimator();
const history = agentSession();
const signal = new AbortController().signal;

/** The offline summarizer, recording every request it answers. */
function recordingOffline(): SummaryClient & { requests: SummaryRequest[] } {
  const inner = createOfflineSummarizer({ estimator: est });
  const requests: SummaryRequest[] = [];
  return {
    provider: inner.provider,
    model: inner.model,
    requests,
    summarize(r, s) {
      requests.push(r);
      return inner.summarize(r, s);
    },
  };
}

const CAPACITY = 32_000; // the summarizers' capacity: the fake servers hold requests to it
function make(client: SummaryClient, extra: Partial<LocalSummarizerOptions> = {}) {
  return createLocalSummarizer({
    client,
    estimator: est,
    budgets: resolveBudgets({ capacity: CAPACITY }),
    ...extra,
  });
}

describe('createLocalSummarizer with the offline summarizer (L1–L8, §14)', () => {
  it('L3/L6: an impossible budget throws BudgetError from prepare, before any request', () => {
    const client = recordingOffline();
    const s = make(client);
    const instructions = est.text(loadSummaryPrompt().instructions);
    expect(() => s.prepare(history, instructions - 1)).toThrow(BudgetError);
    expect(() => s.prepareBands(history, 10)).toThrow(/band input budget/);
    expect(client.requests).toHaveLength(0);
  });

  it('L1/L8: the request carries the L8 prompt with custom instructions appended, the output reserve and no parent context by default', async () => {
    const client = recordingOffline();
    const s = make(client, { instructions: 'Keep the pytest command lines.', summaryOutputLimit: 1_500 });
    const fork = s.prepare(history, 20_000);
    expect(fork.inputTokens).toBe(est.history(fork.prepared.fork));
    const response = await s.request(fork, 'flat', signal);
    const sent = client.requests[0];
    expect(sent.instructions.startsWith(loadSummaryPrompt().instructions)).toBe(true);
    expect(sent.instructions).toMatch(/Keep the pytest command lines\.$/);
    expect(sent.maxOutputTokens).toBe(1_500);
    // No parent context: the only system prompt is the history's own, moved out of the transcript.
    expect(sent.system).toBe(fork.prepared.fork[0].role === 'system' ? SYSTEM : undefined);
    expect(sent.messages.some((m) => m.role === 'system' && m.content === SYSTEM)).toBe(false);
    expect(sent.tools).toBeUndefined();
    expect(s.followsTemplate(response.text, 'flat')).toBe(true);
    expect(response.text).toContain('pytest -q');
  });

  it('S2: system and tools are sent exactly as given (the caller decides when provider/model match)', async () => {
    const client = recordingOffline();
    const s = make(client, { system: SYSTEM, tools: TOOLS });
    await s.request(s.prepare(history, 20_000), 'flat', signal);
    expect(client.requests[0].system).toBe(SYSTEM);
    expect(client.requests[0].tools).toEqual(TOOLS);
  });

  it('§14: followsTemplate rejects template-less text that was not repaired first; the abstract band needs only text', () => {
    const s = make(recordingOffline());
    expect(s.followsTemplate('The agent fixed the bug.', 'flat')).toBe(false);
    expect(s.followsTemplate('The agent fixed the bug.', 'newer')).toBe(false);
    expect(s.followsTemplate(templateSummary(), 'newer')).toBe(true);
    expect(s.followsTemplate('The agent fixed the bug.', 'older')).toBe(true);
    expect(s.followsTemplate('   ', 'older')).toBe(false);
  });

  it('L7/§14: rebuild puts the summary first, keeps a continuity tail, and, given a budget, re-injects the system prompt and README.md', async () => {
    const s = make(recordingOffline(), { reinjectBudgetTokens: 4_000 });
    const history = agentSession(12_000);
    const text = (await s.request(s.prepare(history, 20_000), 'flat', signal)).text;
    const rebuilt = s.rebuild(history, [text], 'manual');
    expect(rebuilt[0]).toBe(history[0]); // re-injected system prompt, verbatim
    expect(isSummaryMessage(rebuilt[1])).toBe(true);
    const files = rebuilt.find((m) => m.metadata?.kind === 'compaction-reinjection');
    expect(files && textOf(files.content)).toContain('### README.md');
    expect(rebuilt[rebuilt.length - 1]).toBe(history[history.length - 1]);
    expect(est.history(rebuilt)).toBeLessThan(est.history(history));
  });

  it('§14: re-injection is off by default; the window-scaled budget min(4,000, floor(capacity × 0.05)) is one call away; an explicit budget wins', async () => {
    expect(defaultReinjectBudget(16_000)).toBe(800);
    expect(defaultReinjectBudget(32_000)).toBe(1_600);
    expect(defaultReinjectBudget(200_000)).toBe(4_000);
    expect(defaultReinjectBudget(null)).toBe(4_000);
    // README.md (≈4k tokens) was read: at 16k the files message stays within 800 tokens.
    const big = agentSession(16_000);
    const reinjected = (m: readonly Message[]) =>
      est.history(m.filter((x) => x.metadata?.kind === 'compaction-reinjection'));
    const at16k = make(recordingOffline(), {
      budgets: resolveBudgets({ capacity: 16_000 }),
      reinjectBudgetTokens: defaultReinjectBudget(16_000),
    });
    const text = (await at16k.request(at16k.prepare(big, 8_000), 'flat', signal)).text;
    const small = reinjected(at16k.rebuild(big, [text], 'automatic'));
    const byDefault = make(recordingOffline(), { budgets: resolveBudgets({ capacity: 16_000 }) });
    expect(reinjected(byDefault.rebuild(big, [text], 'automatic'))).toBe(0);
    expect(small).toBeGreaterThan(0);
    expect(small).toBeLessThanOrEqual(800);
    const explicit = make(recordingOffline(), {
      budgets: resolveBudgets({ capacity: 16_000 }),
      reinjectBudgetTokens: 3_000,
    });
    expect(reinjected(explicit.rebuild(big, [text], 'automatic'))).toBeGreaterThan(800);
  });

  it('§14: reinjectBudgetTokens 0 disables re-injection', async () => {
    const s = make(recordingOffline(), { reinjectBudgetTokens: 0 });
    const text = (await s.request(s.prepare(history, 20_000), 'flat', signal)).text;
    const rebuilt = s.rebuild(history, [text], 'manual');
    expect(isSummaryMessage(rebuilt[0])).toBe(true);
    expect(rebuilt.some((m) => m.metadata?.kind === 'compaction-reinjection')).toBe(false);
  });

  it('L4: bands are prepared together; a band re-bounded alone at a smaller budget shrinks; two summaries rebuild as abstract + detail', async () => {
    const client = recordingOffline();
    const s = make(client, { reinjectBudgetTokens: 0 });
    const long: Message[] = [history[0]];
    for (let i = 0; i < 6; i++) long.push(...agentSession(2_000).slice(1));
    const bands = s.prepareBands(long, 6_000);
    expect(bands.older.inputTokens).toBeGreaterThan(0);
    expect(bands.newer.inputTokens).toBeGreaterThan(0);
    const smaller = s.prepareBand(long, 'older', Math.floor(bands.older.inputTokens / 2));
    expect(smaller.inputTokens).toBeLessThan(bands.older.inputTokens);
    const abstract = await s.request(bands.older, 'older', signal);
    expect(client.requests[0].maxOutputTokens).toBe(150);
    // The offline summarizer answers the abstract band in its condensed form, within the cap.
    expect(abstract.finishReason).toBe('stop');
    expect(est.text(abstract.text)).toBeLessThanOrEqual(150);
    expect(abstract.text).toMatch(/^## Goal\n- Fix the failing test in app\.py/);
    expect(s.followsTemplate(abstract.text, 'older')).toBe(true);
    const raised = make(client, { abstractMaxOutputTokens: 1_024 });
    await raised.request(bands.older, 'older', signal);
    expect(client.requests[1].maxOutputTokens).toBe(1_024);
    const rebuilt = s.rebuild(long, ['Goal: fix add().', templateSummary()], 'automatic');
    expect(textOf(rebuilt[0].content)).toMatch(/^Earlier context \(abstract\):\nGoal: fix add\(\)\./);
    expect(textOf(rebuilt[1].content)).toMatch(/^Recent context \(summary\):\n## Goal/);
  });
});

describe('createLocalSummarizer over HTTP (fake OpenAI-compatible Chat Completions)', () => {
  let srv: FakeServer;
  beforeAll(async () => {
    srv = await startFakeOpenAI({ window: CAPACITY, summaryText: templateSummary() });
  });
  afterAll(() => srv.close());
  const client = () =>
    createSummaryClient(
      resolveRoute({ provider: 'openai-compatible', model: 'deepseek-chat', baseUrl: srv.url }, {}),
      { retries: 0, timeoutMs: 120_000 },
    );
  const last = () => srv.requests[srv.requests.length - 1];

  it('S2/L1: system, tools with tool_choice "none", max_tokens = the output reserve, instructions last', async () => {
    const s = make(client(), { system: SYSTEM, tools: TOOLS, summaryOutputLimit: 1_234 });
    const r = await s.request(s.prepare(history, 20_000), 'flat', signal);
    expect(r.text).toBe(templateSummary());
    const body = last().body;
    expect(body.messages[0]).toEqual({ role: 'system', content: SYSTEM });
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual([
      'bash',
      'read_file',
    ]);
    expect(body.tool_choice).toBe('none');
    expect(body.max_tokens).toBe(1_234);
    expect(body.messages[body.messages.length - 1].content).toBe(loadSummaryPrompt().instructions);
  });

  it('L5/L6: a capacity rejection is rethrown as ContextCapacityError naming provider/model, input_tokens and budget', async () => {
    const s = make(client());
    const fork = s.prepare(history, 20_000);
    srv.script.push({ kind: 'overflow', shape: 'openai-chat' });
    const e = await s.request(fork, 'flat', signal).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ContextCapacityError);
    const err = e as ContextCapacityError;
    expect(err.info.inputTokens).toBe(fork.inputTokens);
    expect(err.info.budget).toBe(20_000);
    expect(err.message).toContain(
      `openai-compatible / deepseek-chat (input_tokens=${fork.inputTokens}, budget=20000)`,
    );
  });

  it('L6: an empty summary fails with "provider returned an empty summary" and route diagnostics', async () => {
    const s = make(client());
    srv.script.push({ kind: 'empty-summary' });
    const e = await s.request(s.prepare(history, 20_000), 'flat', signal).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ProviderError);
    expect(e).not.toBeInstanceOf(ContextCapacityError);
    expect((e as Error).message).toMatch(
      /^Failed to generate compaction summary for openai-compatible \/ deepseek-chat .*provider returned an empty summary$/,
    );
  });

  it('§14/L8: the repair request for a summary missing template headings quotes the validation error', async () => {
    const s = make(client());
    const partial = 'Goal: fix add() in app.py.\nThe agent ran pytest -q, which exited 0.';
    srv.script.push({ kind: 'summary-text', text: partial });
    const fork = s.prepare(history, 20_000);
    const before = srv.requests.length;
    const first = await s.request(fork, 'flat', signal);
    expect(s.followsTemplate(first.text, 'flat')).toBe(false);
    const r = await s.repair!(fork, 'flat', first.text, signal);
    expect(srv.requests.length - before).toBe(2);
    const repair = last().body.messages;
    expect(repair[repair.length - 1].content).toMatch(/summary is missing required sections: .*Goal/);
    expect(r.text).toBe(templateSummary());
    expect(s.followsTemplate(r.text, 'flat')).toBe(true);
  });

  it('§14/L8: a summary accepted without every section is reported with a warning listing them when the history is rebuilt', async () => {
    const s = make(client());
    const partial = '## Goal\n- fix add() in app.py\n## Commands\n- pytest -q exited 0';
    expect(s.followsTemplate(partial, 'flat')).toBe(false);
    s.rebuild(history, [partial], 'automatic');
    const [w] = s.warnings();
    expect(w.band).toBe('flat');
    expect(w.missingSections.length).toBeGreaterThan(0);
    expect(w.missingSections).not.toContain('Goal');
    expect(w.message).toMatch(/^summary accepted without the template sections: /);
    s.rebuild(history, [templateSummary()], 'automatic');
    expect(s.warnings()).toEqual([]);
  });

  it('§14: a truncated summary (finish_reason length) comes back cut off after one request', async () => {
    const s = make(client());
    srv.script.push({ kind: 'length' });
    const before = srv.requests.length;
    const r = await s.request(s.prepare(history, 20_000), 'flat', signal);
    expect(srv.requests.length - before).toBe(1);
    expect(r.finishReason).toBe('length');
  });
});

describe('every summary request fits the declared window (L1, fake Anthropic with a 20,000-token window)', () => {
  let srv: FakeServer;
  beforeAll(async () => {
    srv = await startFakeAnthropic({ summaryText: templateSummary(), window: 20_000 });
  });
  afterAll(() => srv.close());

  it('L1: the frozen prefix and the requested output are subtracted, so the request fits the capacity', async () => {
    const client = createSummaryClient(
      resolveRoute(
        {
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          baseUrl: srv.url,
        },
        { ANTHROPIC_API_KEY: 'k' },
      ),
      { retries: 0, timeoutMs: 120_000 },
    );
    const system = `${SYSTEM} ${'Follow the repository conventions and keep changes small. '.repeat(700)}`;
    // The caller's budget ignores the prefix (as a run without --prefix-tokens does).
    const budgets = resolveBudgets({ capacity: 20_000 });
    const s = make(client, { system, tools: TOOLS, budgets });
    const long = agentSession(60_000);
    const r = await s.request(s.prepare(long, budgets.summaryInputBudget), 'flat', signal);
    expect(r.text).toBe(templateSummary());
    expect(srv.violations).toEqual([]);
    const body = srv.requests[srv.requests.length - 1].body;
    expect(estimateBodyTokens(body) + requestedOutputTokens(body)).toBeLessThanOrEqual(20_000);
  });
});
