import { afterAll, expect, it, jest } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import { startServer } from '#src/serve/index.js';
import type { FakeUsage } from '#dev/fakes/prompt-cache.js';
import { stopWorker } from '#dev/restate/harness.js';
import type { ServeProtocol } from '#support/serve-client-loops.js';
import { COMPACTING_POLICY } from '#support/serve/proxy.js';
import { agentWorker, cachingAgentLoop, restateAndAgentUpstream } from '#support/serve/restate-agent.js';
import { RESTATE_TEST_MS, restateSuite } from '#support/time-limits.js';

/**
 * `compactor serve --engine restate` (the proxy in this process, one Node 24 worker, a real
 * Restate server): the worker writes the summary with its own route and key, and when that
 * route is the model and wire the agent's requests went to, it asks over the last request the
 * proxy sent (kept in the session object by reference), so the fake upstream's prompt cache,
 * which counts as the provider's does, serves nearly all of it.
 */

const { install, describeWithRestate } = restateSuite();
jest.setTimeout(RESTATE_TEST_MS);

const WINDOW = 16_000;
const STEPS = 14;
const RESULT_TOKENS = 2_500;
const WORKER_KEY = 'sk-worker-summary-cache';
const CLIENT_KEY = 'sk-client-summary-cache';

afterAll(() => freeEncoders());

const shareOf = (calls: readonly FakeUsage[]) =>
  calls.reduce((n, u) => n + u.cached, 0) /
  Math.max(
    1,
    calls.reduce((n, u) => n + u.input, 0),
  );

interface Report {
  request: 'prefix' | 'fork';
  fallback: string | null;
  calls: number;
  share: number | null;
}

describeWithRestate('summary calls the cache pays for, on the Restate engine', () => {
  const started = restateAndAgentUpstream(install, WINDOW);

  /**
   * One agent loop through a proxy whose sessions live on Restate, with a worker of route
   * `protocol` (and `session` options over its own); the usage of its summary calls, what the
   * session object reports and the bytes of its kept last request.
   */
  async function loop(protocol: ServeProtocol, name: string, session: object = {}) {
    const { restate, upstream } = started;
    const worker = await agentWorker(install!, started, {
      protocol,
      window: WINDOW,
      key: WORKER_KEY,
      session,
    });
    const proxy = await startServer({
      port: 0,
      capacity: WINDOW,
      engine: 'restate',
      restateIngress: restate.ingress,
      anthropicUpstream: upstream.url,
      openaiUpstream: upstream.url,
      http: { retries: 0 },
      session: { policy: COMPACTING_POLICY },
    });
    try {
      const from = upstream.requests.length;
      const fromSummaries = upstream.summaries.length;
      const loop = { protocol, proxy: proxy.url, loop: name, steps: STEPS, resultTokens: RESULT_TOKENS };
      await cachingAgentLoop({ ...loop, apiKey: CLIENT_KEY });
      const state = await restate.call<{ summaryCache: Report }>('compactorSession', name, 'state');
      const bytes = await restate.stateBytes('compactorSession', name);
      const requests = upstream.requests.slice(from);
      return { calls: upstream.summaries.slice(fromSummaries), report: state.summaryCache, bytes, requests };
    } finally {
      await proxy.close();
      await stopWorker(worker);
    }
  }

  /** The summary requests among `requests` carry the worker's key, never the client's. */
  const keysOf = (requests: { raw: string; headers: Record<string, unknown> }[]) =>
    requests
      .filter((r) => r.raw.includes('You are writing a checkpoint of an agent session'))
      .map((r) => String(r.headers['x-api-key'] ?? r.headers.authorization));

  for (const protocol of ['anthropic', 'openai-chat', 'openai-responses'] as const)
    it(`${protocol}: a worker on the agent's model asks its summary over the last request the proxy sent, each call ≥ 95 % cached; a bounded fork much less`, async () => {
      const prefix = await loop(protocol, `restate-prefix-${protocol}`);
      const fork = await loop(protocol, `restate-fork-${protocol}`, {
        compaction: { summaryOverLastRequest: false },
      });
      console.log(
        `${protocol} on Restate: summary calls cached ${(100 * shareOf(prefix.calls)).toFixed(1)} % over the last request (${prefix.calls.length} calls), ${(100 * shareOf(fork.calls)).toFixed(1)} % as a bounded fork (${fork.calls.length} calls); last request kept in ${prefix.bytes.lastSent} bytes of state (records ${prefix.bytes.records})`,
      );
      expect(prefix.calls.length).toBeGreaterThanOrEqual(1);
      for (const u of prefix.calls) expect(u.cached / u.input).toBeGreaterThanOrEqual(0.95);
      expect(fork.calls.length).toBeGreaterThanOrEqual(1);
      expect(shareOf(fork.calls)).toBeLessThan(shareOf(prefix.calls) - 0.2);
      // The session object reports what the upstream said about its last summary call.
      expect(prefix.report).toMatchObject({ request: 'prefix', fallback: null, calls: 1 });
      expect(prefix.report.share).toBeGreaterThanOrEqual(0.95);
      expect(fork.report).toMatchObject({ request: 'fork', fallback: null, calls: 1 });
      // The worker's key wrote the summaries; the client's never reached Restate or the worker.
      const keys = keysOf(prefix.requests);
      expect(keys.length).toBe(prefix.calls.length);
      for (const k of keys) expect(k).toContain(WORKER_KEY);
      // The last request is kept as positions into the history, not as a second copy of it: a
      // few hundred bytes where one tool result alone is about ten thousand.
      expect(prefix.bytes.lastSent).toBeGreaterThan(0);
      expect(prefix.bytes.lastSent).toBeLessThan(RESULT_TOKENS);
    });

  it('a summary that would not fit beside the last request falls back to the bounded fork and says why', async () => {
    // A summary of up to 6,000 tokens does not fit beside a request near the 12,000-token threshold.
    const run = await loop('anthropic', 'restate-too-big', { limits: { summaryOutputLimit: 6_000 } });
    expect(run.calls.length).toBeGreaterThanOrEqual(1);
    expect(run.report.request).toBe('fork');
    expect(run.report.fallback).toMatch(
      /^the last request \(\d+ tokens\) leaves \d+ tokens for the summary, 6000 needed$/,
    );
  });
});
