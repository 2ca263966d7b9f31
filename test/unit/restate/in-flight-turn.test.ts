import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Checkpoint } from '#src/runtime/checkpoint.js';
import { createCompactorSession } from '#src/session/index.js';
import { isSummaryMessage } from '#src/summary/index.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { agentSteps, templateSummary } from '#dev/restate/sessions.js';

/**
 * The session hook the Restate object keeps its turn in flight with: every settled step's
 * checkpoint is handed out, and a turn continued from one after its summary call finished
 * commits that summary without asking the provider again.
 */

const CAPACITY = 32_000;

describe('a turn kept outside the session directory (the Restate object’s turn state)', () => {
  let fake: FakeServer;
  const options = () => ({
    route: { provider: 'openai-compatible', model: 'deepseek-chat', baseUrl: fake.url, env: {} },
    limits: { capacity: CAPACITY },
    http: { retries: 0 },
  });
  const summaryRequests = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ window: CAPACITY, summaryText: templateSummary() });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('onCheckpoint gets every step; resumeFrom a step after the summary commits it without a second request', async () => {
    const history = agentSteps('kept', 30);
    const checkpoints: Checkpoint[] = [];
    const first = createCompactorSession({ ...options(), history });
    const done = await first.runTurn({ onCheckpoint: (c) => checkpoints.push(c) });
    expect(done).toMatchObject({ decision: 'compacted', summaryCalls: 1 });
    const values = checkpoints.map((c) => JSON.stringify(c.snapshot.value));
    expect(values).toContain(JSON.stringify({ working: 'compacting' }));
    const afterSummary = checkpoints.find(
      (c) => JSON.stringify(c.snapshot.value) === JSON.stringify({ working: 'rebuildingProjection' }),
    );
    expect(afterSummary).toBeDefined();
    expect(summaryRequests()).toBe(1);

    // A worker that died here: a fresh session on the same records continues the turn.
    const second = createCompactorSession({ ...options(), history });
    const resumed = await second.runTurn({ resumeFrom: afterSummary! });
    expect(resumed.decision).toBe('compacted');
    expect(summaryRequests()).toBe(1); // the finished summary call is not sent again
    expect(second.history).toEqual(first.history);
    expect(second.history.filter(isSummaryMessage)).toHaveLength(1);
  });

  it('D3: a damaged checkpoint is refused with a one-line error naming the field', async () => {
    const s = createCompactorSession({ ...options(), history: agentSteps('bad', 2) });
    const bad = { version: 1, machine: 'turn', turnId: '', startedAt: 0, snapshot: {}, store: {} };
    await expect(s.runTurn({ resumeFrom: bad as unknown as Checkpoint })).rejects.toThrow(
      /^checkpoint: invalid checkpoint at turnId: /,
    );
  });
});
