import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { freeEncoders } from '../../../src/estimate/index.js';
import { exportSession, readSessionFile } from '../../../src/formats/index.js';
import type { Message } from '../../../src/messages/message.js';
import { RequestOverWindowError } from '../../../src/runtime/index.js';
import { createCompactorSession, type CompactorSession } from '../../../src/session/index.js';
import { testRunBatches } from '../../support/test-run-batches.js';
import { closeAll, type FakeServer } from '../../support/fake-http.js';
import { startFakeOpenAI } from '../../support/fake-openai.js';
import { estimateBodyTokens } from '../../support/fake-window.js';
import { templateSummary } from '../../unit/session/fixtures.js';

/**
 * The loop guard's safety net (§14, issue 16): with the default preset (tool results kept until
 * compaction), an agent that syncs 60 tool batches a turn right after a compaction refills the
 * window before the refill guard lets compaction run again. The turn used to fail; now old tool
 * results are cleared by VT Code's rules first, and the turn fails only when even that does not
 * fit. Summary calls and the agent's own requests go to a fake server that declares the window,
 * so a request over it fails the test.
 */

afterAll(freeEncoders);
const WINDOW = 32_000;
const RESERVED = 4_000;
const history: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]
  .messages;

let srv: FakeServer;
beforeAll(async () => {
  srv = await startFakeOpenAI({ summaryText: templateSummary(), window: WINDOW });
});
afterAll(() => closeAll(srv));

const session = (policy?: { enabled: false }): CompactorSession =>
  createCompactorSession({
    history: [...history],
    route: {
      provider: 'openai-compatible',
      model: 'deepseek-chat',
      baseUrl: srv.url,
      apiKeyEnv: 'FAKE_KEY',
      env: { FAKE_KEY: 'fake-key-0123456789' },
    },
    limits: { capacity: WINDOW, reservedOutput: RESERVED },
    http: { retries: 0, timeoutMs: 120_000 },
    ...(policy ? { policy } : {}),
  });

/** Sends the turn's request to the fake provider as the agent would (Chat Completions). */
async function send(messages: readonly Message[]): Promise<{ status: number; tokens: number }> {
  const doc = JSON.parse(exportSession(messages, 'openai-chat')) as { messages: unknown[] };
  const body = { model: 'deepseek-chat', messages: doc.messages, max_tokens: RESERVED };
  const r = await request(`${srv.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer fake-key-0123456789' },
    body: JSON.stringify(body),
  });
  await r.body.text();
  return { status: r.statusCode, tokens: estimateBodyTokens(body) };
}

describe('the loop guard clears old tool results before it gives up (§14, issue 16)', () => {
  it('C1/§14: 60 tool batches a turn right after a compaction: the guarded turn clears old results by VT Code rules, fits the window and the provider accepts it', async () => {
    const s = session();
    expect((await s.runTurn()).decision).toBe('compacted');
    const more = testRunBatches(240);
    const fitted = [];
    for (let k = 0; k < 4; k++) {
      const r = await s.runTurn({ pending: more.slice(k * 60, (k + 1) * 60) });
      expect(r.advisory?.overBudget).toBe(false);
      expect(await send(r.request!)).toMatchObject({ status: 200 });
      // Clearing shapes the request only: the session history keeps every result verbatim.
      if (r.clearedToFit) expect(s.history.filter(isFirstCase)).toHaveLength(1);
      if (r.clearedToFit) fitted.push(r);
    }
    // At least one turn was held by the refill guard over the prompt budget and cleared to fit.
    expect(fitted.length).toBeGreaterThan(0);
    const f = fitted[0];
    expect(f.decision).toBe('guarded');
    expect(f.guardReason).toBe('refilled-quickly');
    expect(f.summaryCalls).toBe(0);
    expect(f.tokens.beforeClearing!).toBeGreaterThan(WINDOW - RESERVED);
    expect(f.clearing!.clearedResults).toBeGreaterThan(0);
    expect(f.pressureTokens!).toBeLessThanOrEqual(WINDOW - RESERVED);
    expect(f.request!.filter(isFirstCase)).toHaveLength(0);
  });

  it('§14: with clearing turned off by the caller, the same turn still fails fast with one line', async () => {
    const s = session({ enabled: false });
    expect((await s.runTurn()).decision).toBe('compacted');
    const more = testRunBatches(240);
    let error: unknown = null;
    for (let k = 0; k < 4 && error === null; k++)
      await s.runTurn({ pending: more.slice(k * 60, (k + 1) * 60) }).then(
        (r) => expect(r.clearedToFit).toBe(false),
        (e: unknown) => (error = e),
      );
    expect(error).toBeInstanceOf(RequestOverWindowError);
    expect((error as Error).message).toMatch(
      /^the next request needs [\d,]+ tokens but the window holds 28,000 .*automatic compaction is paused \(refilled quickly\)/,
    );
  });
});

/** The first test run's result, verbatim. */
function isFirstCase(m: Message): boolean {
  return m.role === 'tool' && JSON.stringify(m.content).includes('output for case 0 ');
}
