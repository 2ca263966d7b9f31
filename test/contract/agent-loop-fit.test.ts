import { afterAll, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import { freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { auditRequest, loopTable, readStep, SYSTEM, TASK, TOOLS, type LoopRow } from '#support/agent-loop.js';

/*
 * The contract where a request leaves Compactor: an agent loop driven through the session API
 * (the path every adapter shares) at windows from 8k to 128k with tool results from 0.5k to 8k
 * tokens. Every request handed out must fit the window by an independent tiktoken count, keep
 * tool pairing valid and keep the task; no loop may throw. The whole matrix runs with
 * COMPACTOR_LOOP_MATRIX=1 (and prints its table); `npm test` runs a slice of it.
 */

afterAll(() => {
  freeEncoders();
  freeAuditEncoder();
});

const STEPS = 30;

async function runLoop(
  window: number,
  resultTokens: number,
  steps = STEPS,
  oversized?: number,
): Promise<LoopRow> {
  const session = createCompactorSession({
    limits: { capacity: window },
    envelope: { provider: 'framework', model: 'test-model', system: SYSTEM, tools: TOOLS },
  });
  const row: LoopRow = {
    window,
    resultTokens: oversized ?? resultTokens,
    steps,
    finished: false,
    error: null,
    largestPrompt: 0,
    overWindow: 0,
    pairingProblems: 0,
    missingTask: 0,
    summaryCalls: 0,
  };
  const check = (request: readonly Message[]) => {
    const audit = auditRequest(request);
    row.largestPrompt = Math.max(row.largestPrompt, audit.tokens);
    if (audit.tokens > window) row.overWindow++;
    if (!audit.pairingValid) row.pairingProblems++;
    if (!audit.taskPresent) row.missingTask++;
  };
  try {
    let pending: Message[] = [msg.user(TASK)];
    for (let step = 1; step <= steps; step++) {
      const size = oversized !== undefined && step === Math.ceil(steps / 2) ? oversized : resultTokens;
      const turn = await session.runTurn({ pending: [...pending, ...readStep(step, size)] });
      pending = [];
      row.summaryCalls += turn.summaryCalls;
      check(turn.request!);
      // The request the session hands out next: counted again only where it differs.
      const next = session.prepareRequest().messages;
      if (JSON.stringify(next) !== JSON.stringify(turn.request)) check(next);
    }
    row.finished = true;
  } catch (e) {
    row.error = e instanceof Error ? e.message : String(e);
  } finally {
    session.close();
  }
  return row;
}

function expectContract(row: LoopRow): void {
  expect(row.error).toBeNull();
  expect(row).toMatchObject({ finished: true, overWindow: 0, pairingProblems: 0, missingTask: 0 });
  expect(row.largestPrompt).toBeLessThanOrEqual(row.window);
}

const SLICE: Array<[number, number]> = [
  [8_000, 4_000],
  [12_000, 4_000],
  [16_000, 8_000],
  [32_000, 2_000],
  [128_000, 4_000],
];

describe('every request that leaves Compactor fits its window (agent loops through the session API)', () => {
  it.each(SLICE)(
    'H2/H4/§14: window %i, %i-token tool results, 30 steps: no throw, every request fits (tiktoken), pairing valid, the task kept',
    async (window, size) => {
      const row = await runLoop(window, size);
      expectContract(row);
    },
  );

  it('§14: one tool result larger than the whole window is cut to a preview that says so; the loop goes on', async () => {
    const row = await runLoop(8_000, 1_000, 8, 20_000);
    expectContract(row);
  });

  it('H2: where clearing can make room, large tool results in a small window cost at most one summary call per 10 steps', async () => {
    for (const [window, size] of [
      [12_000, 2_000],
      [16_000, 4_000],
      [32_000, 8_000],
    ] as const) {
      const row = await runLoop(window, size);
      expectContract(row);
      expect(row.summaryCalls).toBeLessThanOrEqual(STEPS / 10);
    }
  });

  (process.env.COMPACTOR_LOOP_MATRIX ? it : it.skip)(
    'the whole matrix (COMPACTOR_LOOP_MATRIX=1)',
    async () => {
      const rows: LoopRow[] = [];
      for (const window of [8_000, 12_000, 16_000, 32_000, 128_000])
        for (const size of [500, 2_000, 4_000, 8_000]) rows.push(await runLoop(window, size));
      for (const window of [8_000, 32_000, 128_000])
        rows.push(await runLoop(window, 1_000, 10, window + 4_000));
      console.log(loopTable(rows));
      for (const row of rows) expectContract(row);
    },
  );
});
