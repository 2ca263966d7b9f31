import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { TASK } from '#dev/loops/loop-matrix.js';
import { startServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { FINAL_TEXT, startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { FakeUsage } from '#dev/fakes/prompt-cache.js';
import { startGeminiUpstream } from '#dev/fakes/gemini-upstream.js';
import { runClientLoop, type ServeProtocol } from '#support/serve-client-loops.js';
import { argsOfStep, runGeminiLoop, stepOfArgs } from '#support/gemini-cli-loop.js';
import { COMPACTING_POLICY, startProxyTo } from '#support/serve/proxy.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

afterAll(() => {
  freeEncoders();
});

const WINDOW = 16_000;
const STEPS = 14;
const RESULT_TOKENS = 2_500;
const MODELS: Record<ServeProtocol, string> = {
  anthropic: 'claude-sonnet-4-6',
  'openai-chat': 'gpt-4o',
  'openai-responses': 'gpt-4o',
};

/** The share of the summary calls' input the fake upstream's prompt cache served. */
const shareOf = (calls: readonly FakeUsage[]) =>
  calls.reduce((n, u) => n + u.cached, 0) /
  Math.max(
    1,
    calls.reduce((n, u) => n + u.input, 0),
  );

/** One loop through a fresh proxy; the usage of its summary calls and what the sessions endpoint reports. */
async function summaryShares(
  upstream: Awaited<ReturnType<typeof startFakeAgentUpstream>>,
  protocol: ServeProtocol,
  overLast: boolean,
  hierarchical: boolean,
) {
  // Compaction instead of clearing, so every step toward the window ends in a summary.
  const server = await startProxyTo(upstream, WINDOW, {
    session: { policy: COMPACTING_POLICY, compaction: { summaryOverLastRequest: overLast }, hierarchical },
  });
  try {
    const from = upstream.summaries.length;
    const loop = `${overLast ? 'P' : 'F'}${hierarchical ? '2' : '1'}`;
    const result = await runClientLoop({
      protocol,
      stream: false,
      proxy: server.url,
      loop,
      task: TASK,
      steps: STEPS,
      resultTokens: RESULT_TOKENS,
      model: MODELS[protocol],
      maxTokens: 1_024,
      apiKey: 'sk-test-summary-cache',
      identify: 'header',
      cacheControl: true,
    });
    expect(result.finalText).toBe(FINAL_TEXT);
    const calls = upstream.summaries.slice(from);
    const state = (await (await fetch(`${server.url}/compactor/sessions/${loop}`)).json()) as any;
    return { share: shareOf(calls), calls, reported: state.summaryCache };
  } finally {
    await server.close();
  }
}

describe('compactor serve: summary calls the prompt cache pays for', () => {
  for (const protocol of ['anthropic', 'openai-chat', 'openai-responses'] as const)
    it(`${protocol}: a summary asked over the last request sent is ≥ 95 % cached; a bounded fork of the same loop much less`, async () => {
      const upstream = await startFakeAgentUpstream({ window: WINDOW });
      let prefix, fork;
      try {
        prefix = await summaryShares(upstream, protocol, true, false);
        fork = await summaryShares(upstream, protocol, false, false);
      } finally {
        await upstream.close();
      }
      console.log(
        `${protocol}: summary calls cached ${(100 * prefix.share).toFixed(1)} % over the last request (${prefix.calls.length} calls), ${(100 * fork.share).toFixed(1)} % as a bounded fork (${fork.calls.length} calls)`,
      );
      expect(prefix.calls.length).toBeGreaterThanOrEqual(1);
      expect(fork.calls.length).toBeGreaterThanOrEqual(1);
      // Every call over the last request, not just their sum.
      for (const u of prefix.calls) expect(u.cached / u.input).toBeGreaterThanOrEqual(0.95);
      expect(fork.share).toBeLessThan(prefix.share - 0.2);
      // The sessions endpoint reports what the upstream said about the last summary call.
      expect(prefix.reported).toMatchObject({ request: 'prefix', fallback: null, calls: 1 });
      expect(prefix.reported.share).toBeGreaterThanOrEqual(0.95);
      expect(fork.reported).toMatchObject({ request: 'fork', calls: 1 });
    });

  for (const protocol of ['anthropic', 'openai-chat'] as const)
    it(`${protocol}: both calls of a two-band summary go over the last request sent, each ≥ 95 % cached; bounded bands much less`, async () => {
      const upstream = await startFakeAgentUpstream({ window: WINDOW });
      let prefix, fork;
      try {
        prefix = await summaryShares(upstream, protocol, true, true);
        fork = await summaryShares(upstream, protocol, false, true);
      } finally {
        await upstream.close();
      }
      console.log(
        `${protocol} two-band: summary calls cached ${(100 * prefix.share).toFixed(1)} % over the last request (${prefix.calls.length} calls), ${(100 * fork.share).toFixed(1)} % as bounded bands (${fork.calls.length} calls)`,
      );
      // Two calls a pass: the abstract of the older part and the detail of the newer.
      expect(prefix.calls.length).toBeGreaterThanOrEqual(2);
      expect(prefix.calls.length % 2).toBe(0);
      for (const u of prefix.calls) expect(u.cached / u.input).toBeGreaterThanOrEqual(0.95);
      expect(fork.calls.length).toBeGreaterThanOrEqual(2);
      expect(fork.share).toBeLessThan(prefix.share - 0.2);
      expect(prefix.reported).toMatchObject({ request: 'prefix', fallback: null, calls: 2 });
      expect(prefix.reported.share).toBeGreaterThanOrEqual(0.95);
      expect(fork.reported).toMatchObject({ request: 'fork', calls: 2 });
    });

  it('gemini: a summary asked over the last request sent is ≥ 95 % cached; a bounded fork of the same loop much less', async () => {
    const shares: Record<string, { calls: FakeUsage[]; reported: any }> = {};
    for (const overLast of [true, false]) {
      const gemini = await startGeminiUpstream({
        window: WINDOW,
        stepOf: stepOfArgs,
        script: {
          steps: STEPS,
          toolName: 'read_file',
          args: argsOfStep,
          finalAnswer: FINAL_TEXT,
          goal: TASK,
        },
      });
      const server = await startServer({
        port: 0,
        capacity: WINDOW,
        geminiUpstream: gemini.baseUrl,
        http: { retries: 0 },
        session: {
          policy: COMPACTING_POLICY,
          compaction: { summaryOverLastRequest: overLast },
        },
      });
      try {
        const result = await runGeminiLoop({
          base: server.url,
          model: 'gemini-2.5-flash',
          key: 'gemini-test-summary-cache',
          mode: 'json',
          loop: 'G',
          task: TASK,
          system: 'You are a careful coding agent.',
          resultTokens: RESULT_TOKENS,
          maxTurns: STEPS + 2,
        });
        expect(result.finalText).toBe(FINAL_TEXT);
        const id = result.headers[0]['x-compactor-session'];
        const state = (await (await fetch(`${server.url}/compactor/sessions/${id}`)).json()) as any;
        const calls = gemini.turns.filter((t) => t.answered === 'summary').map((t) => t.usage);
        shares[overLast ? 'P' : 'F'] = { calls, reported: state.summaryCache };
      } finally {
        await server.close();
        await gemini.close();
      }
    }
    const { P: prefix, F: fork } = shares;
    console.log(
      `gemini: summary calls cached ${(100 * shareOf(prefix.calls)).toFixed(1)} % over the last request (${prefix.calls.length} calls), ${(100 * shareOf(fork.calls)).toFixed(1)} % as a bounded fork (${fork.calls.length} calls)`,
    );
    expect(prefix.calls.length).toBeGreaterThanOrEqual(1);
    expect(fork.calls.length).toBeGreaterThanOrEqual(1);
    for (const u of prefix.calls) expect(u.cached / u.input).toBeGreaterThanOrEqual(0.95);
    expect(shareOf(fork.calls)).toBeLessThan(shareOf(prefix.calls) - 0.2);
    expect(prefix.reported).toMatchObject({ request: 'prefix', fallback: null, calls: 1 });
    expect(fork.reported).toMatchObject({ request: 'fork', calls: 1 });
  });
});
