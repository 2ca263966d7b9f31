import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOAL_LINE, READ_FILE, SYSTEM, TASK } from '#dev/loops/loop-matrix.js';
import { estimateBodyTokens, requestedOutputTokens } from '#dev/fakes/fake-window.js';
import { auditPrompt, freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { startServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { FINAL_TEXT, startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { RecordedRequest } from '#support/fake-http.js';
import { runClientLoop, seenPromptOf } from '#support/serve-client-loops.js';
import { COMPACTING_POLICY, startProxyTo } from '#support/serve/proxy.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

const dir = mkdtempSync(join(tmpdir(), 'serve-native-'));
afterAll(() => {
  freeAuditEncoder();
  freeEncoders();
  rmSync(dir, { recursive: true, force: true });
});

const WINDOW = 16_000;
const STEPS = 30;
/**
 * Steps of the loops that only need a compaction or two to happen (a fallback, a host the
 * catalog does not trust): the first comes after about 3 steps at 16k and 13 at 64k.
 */
const SHORT_STEPS = { [16_000]: 12, [64_000]: 18 } as Record<number, number>;
/** Anthropic's compact edit fires from 50,000 input tokens: its native loops need a window above that. */
const ANTHROPIC_WINDOW = 64_000;
const MAX_TOKENS = 1_024;
const KEY = 'sk-test-serve-native-credential';

/** A catalog file that trusts the fake upstream's host to serve both providers' native compaction. */
const TRUSTING_CATALOG = join(dir, 'catalog.json');
writeFileSync(
  TRUSTING_CATALOG,
  JSON.stringify({
    providers: { openai: { nativeHosts: ['127.0.0.1'] }, anthropic: { nativeHosts: ['127.0.0.1'] } },
  }),
);

type Protocol = 'openai-responses' | 'anthropic';

const isCompactCall = (r: RecordedRequest) => r.path === '/v1/responses/compact';
/** Anthropic's inline compaction: a Messages request that asks to stop once it has compacted. */
const isInlineCall = (r: RecordedRequest) =>
  r.path === '/v1/messages' &&
  (r.body?.context_management?.edits ?? []).some(
    (e: { type?: string; pause_after_compaction?: boolean }) =>
      e.type === 'compact_20260112' && e.pause_after_compaction === true,
  );
const isNativeCall = (r: RecordedRequest) => isCompactCall(r) || isInlineCall(r);
const isSummaryCall = (r: RecordedRequest) =>
  !isInlineCall(r) && r.raw.includes('You are writing a checkpoint');

interface NativeLoop {
  protocol: Protocol;
  stream: boolean;
  /** What the fake does with a native call: compact, or fail (the Responses endpoint 500s, Anthropic refuses the edit). */
  native: 'compacts' | 'fails';
  catalog?: string;
  window?: number;
  /** The agent's system prompt, when not the loop matrix's one line. */
  system?: string;
  /** Fewer steps than {@link STEPS}, for a loop that only needs to reach its first compactions. */
  short?: boolean;
}

/** Runs one tool loop through the proxy with compaction instead of clearing. */
async function loopThroughProxy(l: NativeLoop) {
  const window = l.window ?? WINDOW;
  const steps = l.short === true ? SHORT_STEPS[window] : STEPS;
  const upstream = await startFakeAgentUpstream({
    window,
    compactEndpoint: l.native,
    anthropicCompaction: l.native === 'compacts' ? 'compacts' : 'refuses',
  });
  const server = await startProxyTo(upstream, window, {
    ...(l.catalog !== undefined ? { catalog: l.catalog } : {}),
    session: { policy: COMPACTING_POLICY },
  });
  try {
    const result = await runClientLoop({
      protocol: l.protocol,
      stream: l.stream,
      proxy: server.url,
      loop: 'N',
      task: TASK,
      steps,
      resultTokens: 4_000,
      model: l.protocol === 'anthropic' ? 'claude-sonnet-4-6' : 'gpt-4o',
      maxTokens: MAX_TOKENS,
      identify: 'header',
      apiKey: KEY,
      ...(l.system !== undefined ? { system: l.system } : {}),
    });
    const state = (await (await fetch(`${server.url}/compactor/sessions/N`)).json()) as {
      strategy: string;
    };
    const requests = [...upstream.requests];
    const refusals = [...upstream.refusals];
    const path = l.protocol === 'anthropic' ? '/v1/messages' : '/v1/responses';
    const turns = requests.filter((r) => r.path === path && !isSummaryCall(r) && !isInlineCall(r));
    const audits = turns.map((r) => auditPrompt(seenPromptOf(l.protocol, r.body), GOAL_LINE));
    return { window, steps, result, state, requests, turns, audits, refusals };
  } finally {
    await server.close();
    await upstream.close();
  }
}

/** What every loop must keep: the answer, one request per step, each fitting, paired and with its task. */
function expectLoopKept(run: Awaited<ReturnType<typeof loopThroughProxy>>, label: string) {
  expect(run.result.finalText).toBe(FINAL_TEXT);
  expect(run.result.streamProblems).toEqual([]);
  // Nothing the proxy sent was refused for breaking the API's rules (summaries and compactions included).
  expect(run.refusals).toEqual([]);
  expect(run.turns).toHaveLength(run.steps + 1);
  const largest = Math.max(...run.audits.map((a) => a.tokens));
  console.log(
    `${label}: largest prompt ${largest} of ${run.window} tokens; ${run.requests.filter(isNativeCall).length} native calls, ${run.requests.filter(isSummaryCall).length} summary calls in ${run.steps} steps`,
  );
  expect(largest + MAX_TOKENS).toBeLessThanOrEqual(run.window);
  expect(run.audits.filter((a) => !a.pairingValid)).toEqual([]);
  expect(run.audits.filter((a) => !a.taskPresent)).toEqual([]);
  // The client's own credential reached the upstream with every request, compactions included.
  const credential = (r: RecordedRequest) => r.headers.authorization ?? r.headers['x-api-key'];
  const expected = (r: RecordedRequest) => (r.headers.authorization ? `Bearer ${KEY}` : KEY);
  expect(run.requests.filter((r) => credential(r) !== expected(r))).toEqual([]);
}

/** Whether an upstream Messages request replays a compaction block. */
const replaysBlock = (r: RecordedRequest) =>
  (r.body.messages as { content: unknown }[]).some(
    (m) => Array.isArray(m.content) && m.content.some((b: { type?: string }) => b.type === 'compaction'),
  );

describe.each([false, true])(
  'compactor serve: native compaction through the upstream (stream %s)',
  (stream) => {
    const mode = stream ? 'SSE' : 'JSON';
    // The trusted loops run in both modes; each fallback and untrusted loop in one, so each
    // protocol has one of them streamed and one not.
    const once = (streamed: boolean) => (name: string, test: () => Promise<void>) => {
      if (stream === streamed) it(name, test);
    };

    it(`C3/N1: a Responses loop (${mode}) on an upstream the catalog trusts compacts through /responses/compact, with no summary calls`, async () => {
      const run = await loopThroughProxy({
        protocol: 'openai-responses',
        stream,
        native: 'compacts',
        catalog: TRUSTING_CATALOG,
      });
      expectLoopKept(run, `responses ${mode} native`);
      const compacts = run.requests.filter(isCompactCall);
      expect(compacts.length).toBeGreaterThanOrEqual(1);
      expect(compacts.every((r) => r.body.model === 'gpt-4o')).toBe(true);
      expect(run.requests.filter(isSummaryCall)).toEqual([]);
      // The compacted history replays the provider's opaque item verbatim.
      const replaysItem = (r: RecordedRequest) =>
        (r.body.input as { type?: string }[]).some((i) => i.type === 'compaction');
      expect(run.turns.filter(replaysItem).length).toBeGreaterThanOrEqual(1);
      expect(run.state.strategy).toBe('nativeStandalone');
      // Each answer that compacted said how.
      expect(run.result.strategies).toEqual(compacts.map(() => 'nativeStandalone'));
    });

    once(false)(
      `C3: when the compact endpoint fails (${mode}) the session falls back to a Local summary through the same upstream`,
      async () => {
        const run = await loopThroughProxy({
          protocol: 'openai-responses',
          stream,
          native: 'fails',
          catalog: TRUSTING_CATALOG,
          short: true,
        });
        expectLoopKept(run, `responses ${mode} fallback`);
        expect(run.requests.filter(isCompactCall).length).toBeGreaterThanOrEqual(1);
        expect(run.requests.filter(isSummaryCall).length).toBeGreaterThanOrEqual(1);
        expect(run.audits.some((a) => a.summaries.length > 0)).toBe(true);
        expect(run.result.strategies.length).toBeGreaterThanOrEqual(1);
        expect(run.result.strategies.every((s) => s === 'local')).toBe(true);
      },
    );

    once(true)(
      `C3: a Responses upstream (${mode}) on a host the catalog does not trust is summarized locally, never sent to /responses/compact`,
      async () => {
        const run = await loopThroughProxy({
          protocol: 'openai-responses',
          stream,
          native: 'compacts',
          short: true,
        });
        expectLoopKept(run, `responses ${mode} untrusted`);
        expect(run.requests.filter(isCompactCall)).toEqual([]);
        expect(run.requests.filter(isSummaryCall).length).toBeGreaterThanOrEqual(1);
        expect(run.state.strategy).toBe('local');
      },
    );

    it(`C3/N1: a Messages loop (${mode}) on an upstream the catalog trusts compacts with the compact edit, and replays the block as the API requires`, async () => {
      const run = await loopThroughProxy({
        protocol: 'anthropic',
        stream,
        native: 'compacts',
        catalog: TRUSTING_CATALOG,
        window: ANTHROPIC_WINDOW,
      });
      expectLoopKept(run, `messages ${mode} native`);
      const inline = run.requests.filter(isInlineCall);
      expect(inline.length).toBeGreaterThanOrEqual(1);
      expect(inline.every((r) => r.body.model === 'claude-sonnet-4-6' && r.body.stream === undefined)).toBe(
        true,
      );
      expect(run.requests.filter(isSummaryCall)).toEqual([]);
      const replaying = run.turns.filter(replaysBlock);
      expect(replaying.length).toBeGreaterThanOrEqual(1);
      // The block goes first, alone in its message: it carries the summary.
      for (const r of replaying)
        expect(r.body.messages[0].content).toEqual([expect.objectContaining({ type: 'compaction' })]);
      // Between two compactions each request repeats the one before it byte for byte, then adds to it.
      const text = (r: RecordedRequest) => JSON.stringify(r.body.messages).slice(0, -1);
      const sameBlock = (a: RecordedRequest, b: RecordedRequest) =>
        JSON.stringify(a.body.messages[0]) === JSON.stringify(b.body.messages[0]);
      const pairs = replaying.slice(1).map((r, i) => [replaying[i], r] as const);
      const stable = pairs.filter(([a, b]) => sameBlock(a, b));
      expect(stable.length).toBeGreaterThanOrEqual(STEPS / 3);
      expect(stable.filter(([a, b]) => !text(b).startsWith(text(a)))).toEqual([]);
      expect(run.state.strategy).toBe('nativeInline');
      expect(run.result.strategies).toEqual(inline.map(() => 'nativeInline'));
    });

    once(true)(
      `C3: when the upstream refuses the compact edit (${mode}) a Messages session falls back to a Local summary through the same upstream`,
      async () => {
        const run = await loopThroughProxy({
          protocol: 'anthropic',
          stream,
          native: 'fails',
          catalog: TRUSTING_CATALOG,
          window: ANTHROPIC_WINDOW,
          short: true,
        });
        expectLoopKept(run, `messages ${mode} fallback`);
        expect(run.requests.filter(isInlineCall).length).toBeGreaterThanOrEqual(1);
        expect(run.requests.filter(isSummaryCall).length).toBeGreaterThanOrEqual(1);
        expect(run.turns.filter(replaysBlock)).toEqual([]);
        expect(run.result.strategies.length).toBeGreaterThanOrEqual(1);
        expect(run.result.strategies.every((s) => s === 'local')).toBe(true);
      },
    );

    once(false)(
      `C3: a Messages upstream (${mode}) on a host the catalog does not trust is summarized locally, with no compact edit sent`,
      async () => {
        const run = await loopThroughProxy({
          protocol: 'anthropic',
          stream,
          native: 'compacts',
          window: ANTHROPIC_WINDOW,
          short: true,
        });
        expectLoopKept(run, `messages ${mode} untrusted`);
        expect(run.requests.filter(isInlineCall)).toEqual([]);
        expect(run.requests.filter(isSummaryCall).length).toBeGreaterThanOrEqual(1);
        expect(run.state.strategy).toBe('local');
      },
    );
  },
);

/** A long system prompt (about 12,000 tokens) of the kind coding agents send: rules, one per line. */
const LONG_SYSTEM = [
  SYSTEM,
  ...Array.from(
    { length: 600 },
    (_, i) => `Rule ${i + 1}: read file number ${i + 1} in full before you comment on it.`,
  ),
].join('\n');

describe('compactor serve: the agent prompt and tools in Anthropic compactions', () => {
  it('C3/N1/S2: with a long system prompt every inline compaction carries the system prompt and tools and still fits the window', async () => {
    const run = await loopThroughProxy({
      protocol: 'anthropic',
      stream: false,
      native: 'compacts',
      catalog: TRUSTING_CATALOG,
      window: ANTHROPIC_WINDOW,
      system: LONG_SYSTEM,
    });
    expectLoopKept(run, 'messages JSON native, long system prompt');
    const inline = run.requests.filter(isInlineCall);
    expect(inline.length).toBeGreaterThanOrEqual(1);
    // The API refuses tool blocks without tools; the same system and tools also keep the prompt cache.
    for (const r of inline) {
      expect(r.body.system).toBe(LONG_SYSTEM);
      // The proxy offers its recall tool beside the agent's own from the first request on.
      expect(r.body.tools.map((t: { name: string }) => t.name)).toEqual([READ_FILE.name, 'recall']);
      expect(estimateBodyTokens(r.body) + requestedOutputTokens(r.body)).toBeLessThanOrEqual(
        ANTHROPIC_WINDOW,
      );
    }
  });
});

describe('compactor serve: Anthropic native compaction below its trigger floor', () => {
  it(`C3: at a ${WINDOW}-token window a trusted Messages upstream is never asked to compact (its edit cannot fire under 50,000 tokens); summaries are Local`, async () => {
    const run = await loopThroughProxy({
      protocol: 'anthropic',
      stream: false,
      native: 'compacts',
      catalog: TRUSTING_CATALOG,
      short: true,
    });
    expectLoopKept(run, 'messages JSON 16k');
    expect(run.requests.filter(isInlineCall)).toEqual([]);
    expect(run.requests.filter(isSummaryCall).length).toBeGreaterThanOrEqual(1);
    expect(run.result.strategies.every((s) => s === 'local')).toBe(true);
  });
});

describe('compactor serve: the catalog file', () => {
  it('a catalog file that cannot be read stops the server from starting, naming the file', async () => {
    const missing = join(dir, 'no-such-catalog.json');
    await expect(startServer({ port: 0, catalog: missing })).rejects.toThrow(
      /no-such-catalog\.json: cannot read catalog file/,
    );
  });
});
