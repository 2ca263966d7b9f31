import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { freeEncoders } from '#src/estimate/index.js';
import { exportSession, readSessionFile } from '#src/formats/index.js';
import type { Message } from '#src/messages/message.js';
import { createCompactorSession, type CompactorSession } from '#src/session/index.js';
import { testRunBatches } from '#support/test-run-batches.js';
import { closeAll, type FakeServer } from '#support/fake-http.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { estimateBodyTokens } from '#support/fake-window.js';
import { templateSummary } from '#support/session/fixtures.js';

/**
 * An agent that syncs 60 tool batches a turn right after a compaction refills the window at
 * once. That is no thrash (the pass made room that new output took), so nothing pauses and
 * nothing fails: old results are cleared, compaction runs again, and a request still over the
 * window is made to fit. Summary calls and the agent's own requests go to a fake server that
 * declares the window, so a request over it fails the test.
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

describe('a window refilled right after a compaction is no error (§14)', () => {
  it.each([
    ['the defaults', undefined],
    ['clearing turned off by the caller', { enabled: false } as const],
  ])(
    'C1/§14: 60 tool batches a turn right after a compaction, %s: every request fits the window and the provider accepts it; clearing never touches the session history',
    async (_name, policy) => {
      const s = session(policy);
      expect((await s.runTurn()).decision).toBe('compacted');
      const more = testRunBatches(240);
      for (let k = 0; k < 4; k++) {
        const r = await s.runTurn({ pending: more.slice(k * 60, (k + 1) * 60) });
        expect(r.advisory?.overBudget).toBe(false);
        expect(r.pressureTokens!).toBeLessThanOrEqual(WINDOW - RESERVED);
        expect(await send(r.request!)).toMatchObject({ status: 200 });
        // The session API hands out the same request the turn built.
        expect(s.prepareRequest().messages).toBe(r.request);
      }
      // Clearing and fitting shape requests only: the session keeps the first result verbatim
      // unless a compaction summarized it.
      expect(s.history.filter(isFirstCase).length).toBeLessThanOrEqual(1);
    },
  );
});

/** The first test run's result, verbatim. */
function isFirstCase(m: Message): boolean {
  return m.role === 'tool' && JSON.stringify(m.content).includes('output for case 0 ');
}
