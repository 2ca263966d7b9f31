import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOAL_LINE, TASK } from '#dev/loops/loop-matrix.js';
import { auditPrompt, freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { startServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import {
  FINAL_TEXT,
  startFakeAgentUpstream,
  type FakeCompactEndpoint,
} from '#support/fake-agent-upstream.js';
import type { RecordedRequest } from '#support/fake-http.js';
import { runClientLoop, seenPromptOf } from '#support/serve-client-loops.js';

const dir = mkdtempSync(join(tmpdir(), 'serve-native-'));
afterAll(() => {
  freeAuditEncoder();
  freeEncoders();
  rmSync(dir, { recursive: true, force: true });
});

const WINDOW = 16_000;
const STEPS = 30;
const MAX_TOKENS = 1_024;
const KEY = 'sk-test-serve-native-credential';

/** A catalog file that trusts the fake upstream's host to serve OpenAI's native compaction. */
const TRUSTING_CATALOG = join(dir, 'catalog.json');
writeFileSync(TRUSTING_CATALOG, JSON.stringify({ providers: { openai: { nativeHosts: ['127.0.0.1'] } } }));

const isCompactCall = (r: RecordedRequest) => r.path === '/v1/responses/compact';
const isSummaryCall = (r: RecordedRequest) => r.raw.includes('You are writing a checkpoint');

/** Runs one Responses tool loop through the proxy at a 16k window with compaction instead of clearing. */
async function loopThroughProxy(compactEndpoint: FakeCompactEndpoint, catalog?: string) {
  const upstream = await startFakeAgentUpstream({ window: WINDOW, compactEndpoint });
  const server = await startServer({
    port: 0,
    capacity: WINDOW,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
    ...(catalog !== undefined ? { catalog } : {}),
    session: { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } },
  });
  try {
    const result = await runClientLoop({
      protocol: 'openai-responses',
      stream: false,
      proxy: server.url,
      loop: 'N',
      task: TASK,
      steps: STEPS,
      resultTokens: 4_000,
      model: 'gpt-4o',
      maxTokens: MAX_TOKENS,
      identify: 'header',
      apiKey: KEY,
    });
    const state = (await (await fetch(`${server.url}/compactor/sessions/N`)).json()) as {
      strategy: string;
    };
    const requests = [...upstream.requests];
    const turns = requests.filter((r) => r.path === '/v1/responses' && !isSummaryCall(r));
    const audits = turns.map((r) => auditPrompt(seenPromptOf('openai-responses', r.body), GOAL_LINE));
    return { result, state, requests, turns, audits };
  } finally {
    await server.close();
    await upstream.close();
  }
}

/** What every loop must keep: the answer, one request per step, each fitting, paired and with its task. */
function expectLoopKept(run: Awaited<ReturnType<typeof loopThroughProxy>>) {
  expect(run.result.finalText).toBe(FINAL_TEXT);
  expect(run.turns).toHaveLength(STEPS + 1);
  const largest = Math.max(...run.audits.map((a) => a.tokens));
  console.log(
    `largest prompt ${largest} tokens; ${run.requests.filter(isCompactCall).length} compact calls, ${run.requests.filter(isSummaryCall).length} summary calls in ${STEPS} steps`,
  );
  expect(largest + MAX_TOKENS).toBeLessThanOrEqual(WINDOW);
  expect(run.audits.filter((a) => !a.pairingValid)).toEqual([]);
  expect(run.audits.filter((a) => !a.taskPresent)).toEqual([]);
  // The client's own credential reached the upstream with every request, compactions included.
  expect(run.requests.filter((r) => r.headers.authorization !== `Bearer ${KEY}`)).toEqual([]);
}

describe('compactor serve: native compaction through the upstream', () => {
  it('C3/N1: a Responses loop on an upstream the catalog trusts compacts through /responses/compact, with no summary calls', async () => {
    const run = await loopThroughProxy('compacts', TRUSTING_CATALOG);
    expectLoopKept(run);
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

  it('C3: when the compact endpoint fails the session falls back to a Local summary through the same upstream', async () => {
    const run = await loopThroughProxy('fails', TRUSTING_CATALOG);
    expectLoopKept(run);
    expect(run.requests.filter(isCompactCall).length).toBeGreaterThanOrEqual(1);
    expect(run.requests.filter(isSummaryCall).length).toBeGreaterThanOrEqual(1);
    expect(run.audits.some((a) => a.summaries.length > 0)).toBe(true);
    expect(run.result.strategies?.length).toBeGreaterThanOrEqual(1);
    expect(run.result.strategies?.every((s) => s === 'local')).toBe(true);
  });

  it('C3: an upstream on a host the catalog does not trust is summarized locally, never sent to /responses/compact', async () => {
    const run = await loopThroughProxy('compacts');
    expectLoopKept(run);
    expect(run.requests.filter(isCompactCall)).toEqual([]);
    expect(run.requests.filter(isSummaryCall).length).toBeGreaterThanOrEqual(1);
    expect(run.state.strategy).toBe('local');
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
