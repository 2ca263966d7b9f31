import { afterAll, expect, it, jest } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import type { RecordedRequest } from '#dev/fakes/fake-http.js';
import { stopWorker } from '#dev/restate/harness.js';
import type { ServeProtocol } from '#support/serve-client-loops.js';
import { COMPACTING_POLICY, startProxyTo } from '#support/serve/proxy.js';
import { agentWorker, cachingAgentLoop, restateAndAgentUpstream } from '#support/serve/restate-agent.js';
import { RESTATE_TEST_MS, restateSuite } from '#support/time-limits.js';

/**
 * The same agent loop through `compactor serve` in memory and through `compactor serve
 * --engine restate` (one Node 24 worker on the agent's own model, a real Restate server): the
 * session object is opened afresh for every request, yet it carries from turn to turn what an
 * in-memory session does (the prompt cache's cycle, the request the last turn ended with, the
 * loop guard), so the same turns compact and the upstream receives the same requests.
 */

const { install, describeWithRestate } = restateSuite();
jest.setTimeout(RESTATE_TEST_MS);

const WINDOW = 16_000;
const STEPS = 14;
const RESULT_TOKENS = 2_500;

afterAll(() => freeEncoders());

const SUMMARY_MARKER = 'You are writing a checkpoint of an agent session';

const itemsOf = (r: RecordedRequest) => (r.body?.messages ?? r.body?.input) as unknown[] | undefined;

/** Each request as the upstream got it: `summary`, or how many items an agent request holds. */
const shapeOf = (requests: readonly RecordedRequest[]) =>
  requests.map((r) => (r.raw.includes(SUMMARY_MARKER) ? 'summary' : (itemsOf(r)?.length ?? 0)));

/**
 * The items of each agent request, as sent, but for the step the fake writes into a summary:
 * it reads it from the client's headers, which a worker's summary request never carries (and
 * so the id of the summary's list of replaced results, derived from its text).
 */
const agentItems = (requests: readonly RecordedRequest[]) =>
  requests
    .filter((r) => !r.raw.includes(SUMMARY_MARKER))
    .map(
      (r) =>
        JSON.parse(
          JSON.stringify(itemsOf(r))
            .replace(/\(summary written at step \d+\)/g, '(summary written)')
            .replace(/\bs-[0-9a-f]{8}\b/g, 's-id'),
        ) as unknown,
    );

describeWithRestate('a Restate session decides as an in-memory one', () => {
  const started = restateAndAgentUpstream(install, WINDOW);

  /** One agent loop through a proxy started with `engine`; the requests the upstream received. */
  async function loop(protocol: ServeProtocol, name: string, engine: object) {
    const { upstream } = started;
    const proxy = await startProxyTo(upstream, WINDOW, { ...engine, session: { policy: COMPACTING_POLICY } });
    try {
      const from = upstream.requests.length;
      const loop = { protocol, proxy: proxy.url, loop: name, steps: STEPS, resultTokens: RESULT_TOKENS };
      await cachingAgentLoop({ ...loop, apiKey: 'sk-client-same-decisions' });
      return upstream.requests.slice(from);
    } finally {
      await proxy.close();
    }
  }

  for (const protocol of ['anthropic', 'openai-chat', 'openai-responses'] as const)
    it(`${protocol}: the same turns compact and every agent request sends the same items`, async () => {
      const memory = await loop(protocol, `same-${protocol}`, {});
      const key = 'sk-worker-same-decisions';
      const worker = await agentWorker(install!, started, { protocol, window: WINDOW, key });
      let onRestate: RecordedRequest[];
      try {
        const engine = { engine: 'restate', restateIngress: started.restate.ingress };
        onRestate = await loop(protocol, `same-${protocol}`, engine);
      } finally {
        await stopWorker(worker);
      }
      const expected = shapeOf(memory);
      console.log(`${protocol}: in memory ${expected.join(' ')}; on Restate ${shapeOf(onRestate).join(' ')}`);
      // The loop compacts more than once, so the carried cache cycle matters after a pass too.
      expect(expected.filter((s) => s === 'summary').length).toBeGreaterThanOrEqual(2);
      expect(shapeOf(onRestate)).toEqual(expected);
      // The summaries replace the same spans: the requests after them hold the same items too
      // (the Restate path writes an item's keys in another order; the values are the same).
      expect(agentItems(onRestate)).toEqual(agentItems(memory));
    });
});
