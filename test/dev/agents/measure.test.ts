import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request } from 'undici';
import { startMatrixModel, type MatrixModel } from '#dev/agents/fake-model.js';
import { measureCell } from '#dev/agents/measure.js';
import { RUN_NOISE, worstRunningShare } from '#dev/agents/verdict.js';
import { estimateBodyTokens } from '#dev/fakes/fake-window.js';
import { freeAuditEncoder } from '#dev/loops/prompt-audit.js';

/*
 * The matrix judge over what the matrix model really received: where a small window leaves the
 * oldest exchange out while a new one comes in, the request keeps its length but every kept
 * message moves up; what that step freed is the older request less what the newer kept of it,
 * not a sum over positions that no longer hold the same messages. And two runs of one agent
 * differ in the random ids it writes into each request, which the running tally must not count.
 */

const goal = 'Read the four files, then report the marker.';
const task = {
  steps: 4,
  tool: { name: 'Read', args: (n: number) => ({ file_path: `/work/file-${n}.txt` }) },
  finalAnswer: 'All files read. MARKER-1',
  goal,
};
const tools = [{ name: 'Read', description: 'Reads a file.', input_schema: { type: 'object' } }];
const text = (n: number) => `File ${n}.\n${'const x = 1; // some source text\n'.repeat(60)}`;
const stub = (n: number) => `{"cleared":"tool_result","note":"recall with id r-0000000${n}"}`;

/** The assistant's call of step n and the user's message with its result. */
const exchange = (n: number, result: string) => [
  {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: `toolu_s${n}`, name: 'Read', input: { file_path: `/work/file-${n}.txt` } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_s${n}`, content: result }] },
];

const body = (taskText: string, ...items: unknown[][]) => ({
  model: 'fake-model',
  max_tokens: 1_000,
  system: 'You read files.',
  tools,
  messages: [{ role: 'user', content: taskText }, ...items.flat()],
});

/** Sends a run's requests to the model as the agent (through the proxy) would: each answered. */
async function sendAll(model: MatrixModel, bodies: unknown[]): Promise<void> {
  for (const b of bodies) {
    const r = await request(`${model.root}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(b),
    });
    expect(r.statusCode).toBe(200);
    await r.body.text();
  }
  expect(model.turns.map((t) => t.answered)).toEqual([3, 'final']);
}

describe('the agent matrix judge', () => {
  let model: MatrixModel;
  beforeAll(async () => {
    model = await startMatrixModel({ window: 100_000, task });
  });
  afterAll(async () => {
    await model.close();
    freeAuditEncoder();
  });

  test('a step that leaves the oldest exchange out as a new one comes in counts what left, less the note it added', async () => {
    // Two loop requests of the same length: the second has exchange 0 left out (a line on the
    // task names it), exchange 2 cleared, and exchange 3 new.
    const older = body(goal, exchange(0, stub(0)), exchange(1, stub(1)), exchange(2, text(2)));
    const newer = body(
      `${goal}\n\n[compactor: 2 older messages were left out]\n- r-00000000 Read: /work/file-0.txt`,
      exchange(1, stub(1)),
      exchange(2, stub(2)),
      exchange(3, text(3)),
    );
    // What the agent sent: its whole history, one exchange more each time.
    const sent = [
      body(goal, exchange(0, text(0)), exchange(1, text(1)), exchange(2, text(2))),
      body(goal, exchange(0, text(0)), exchange(1, text(1)), exchange(2, text(2)), exchange(3, text(3))),
    ];
    await sendAll(model, [older, newer]);
    const relayed = sent.map((b) => ({
      method: 'POST',
      path: '/v1/messages',
      status: 200,
      body: JSON.stringify(b),
    }));
    const m = measureCell(model, relayed, goal, 100_000);
    expect(m.breaks).toHaveLength(1);
    // The new exchange is what the agent added; the rest of the newer request is what the step
    // kept of the older one.
    const kept = estimateBodyTokens({ ...newer, messages: newer.messages.slice(0, -2) });
    const freed = estimateBodyTokens(older) - kept;
    expect(freed).toBeGreaterThan(0);
    expect(m.breaks[0]).toMatchObject({ at: 1, freed, afterSummary: false, clearedAll: true });
  });

  test('N1: two runs that differ only in the random ids the agent wrote have the same running tally', async () => {
    // As Codex does: ids of the session, thread, turn and install in every request, drawn anew
    // in each run. Ids of repeated letters take few tokens, ids of mixed digits many.
    const ids = (run: 'a' | 'b') =>
      run === 'a'
        ? ['aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb']
        : ['7f3c9e21-0b4d-4e8a-9c1f-2d6b5a8e03f7', '91d0e6a3-5c27-4f8b-b4e9-08a3f1c6d25e'];
    const runBodies = (run: 'a' | 'b') => {
      const [session, turn] = ids(run);
      const metadata = {
        session_id: session,
        thread_id: session,
        turn_id: turn,
        user_id: JSON.stringify({ session_id: session, installation_id: turn }),
      };
      return [
        { ...body(goal, exchange(0, text(0)), exchange(1, text(1)), exchange(2, text(2))), metadata },
        {
          ...body(
            goal,
            exchange(0, text(0)),
            exchange(1, text(1)),
            exchange(2, text(2)),
            exchange(3, text(3)),
          ),
          metadata,
        },
      ];
    };
    const tallyOf = async (run: 'a' | 'b') => {
      const runModel = await startMatrixModel({ window: 100_000, task });
      try {
        await sendAll(runModel, runBodies(run));
        return measureCell(runModel, [], goal, run === 'a' ? null : 100_000);
      } finally {
        await runModel.close();
      }
    };
    const direct = await tallyOf('a');
    const through = await tallyOf('b');
    // The ids alone make the requests differ by more than the noise the judge allows.
    const [a, b] = [runBodies('a')[0], runBodies('b')[0]].map(estimateBodyTokens);
    expect(b / a).toBeGreaterThan(1 + RUN_NOISE);
    expect(through.tally).toEqual(direct.tally);
    expect(worstRunningShare(through, direct)).toBe(1);
  });
});
