import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request } from 'undici';
import { startMatrixModel, type MatrixModel } from '#dev/agents/fake-model.js';
import { freeAuditEncoder } from '#dev/loops/prompt-audit.js';

/*
 * The matrix model over real HTTP: a Gemini agent's loop (streamed frames, the call's id read
 * back from the functionResponse), the provider's own error for a request over the window, and
 * the proxy's summary calls told apart from the agent's own side calls.
 */

const WINDOW = 4_000;
const task = {
  steps: 2,
  tool: { name: 'read_file', args: (n: number) => ({ file_path: `/work/file-${n}.txt` }) },
  finalAnswer: 'All files read. MARKER-1',
  goal: 'Read both files.',
};
const tools = [{ functionDeclarations: [{ name: 'read_file', parameters: { type: 'object' } }] }];
const user = (text: string) => ({ role: 'user', parts: [{ text }] });

async function post(model: MatrixModel, path: string, body: unknown) {
  const r = await request(`${model.root}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.statusCode, text: await r.body.text() };
}

/** The JSON of each `data:` frame of an SSE body. */
const frames = (sse: string) =>
  sse
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as any);

describe('the agent matrix model', () => {
  let model: MatrixModel;
  beforeAll(async () => {
    model = await startMatrixModel({ window: WINDOW, task });
  });
  afterAll(async () => {
    await model.close().catch(() => undefined); // the over-window request below is on purpose
    freeAuditEncoder();
  });

  test('a Gemini agent is asked for file 0, then file 1 after the result of call 0, then answered', async () => {
    const path = '/v1beta/models/gemini-x:streamGenerateContent?alt=sse';
    const first = frames((await post(model, path, { contents: [user(task.goal)], tools })).text);
    const call = first.at(-1).candidates[0].content.parts.at(-1).functionCall;
    expect(call).toEqual({ id: 'call_s0', name: 'read_file', args: { file_path: '/work/file-0.txt' } });
    expect(first.at(-1).usageMetadata.promptTokenCount).toBeGreaterThan(0);
    const answered = (n: number) => [
      { role: 'model', parts: [{ functionCall: { id: `call_s${n}`, name: 'read_file', args: {} } }] },
      {
        role: 'user',
        parts: [{ functionResponse: { id: `call_s${n}`, name: 'read_file', response: { output: 'x' } } }],
      },
    ];
    const second = frames(
      (await post(model, path, { contents: [user(task.goal), ...answered(0)], tools })).text,
    );
    expect(second.at(-1).candidates[0].content.parts.at(-1).functionCall.args).toEqual({
      file_path: '/work/file-1.txt',
    });
    const last = await post(model, '/v1beta/models/gemini-x:generateContent', {
      contents: [user(task.goal), ...answered(0), ...answered(1)],
      tools,
    });
    expect(JSON.parse(last.text).candidates[0].content.parts[0].text).toBe(task.finalAnswer);
    expect(model.turns.map((t) => t.answered)).toEqual([0, 1, 'final']);
  });

  test('a request over the window gets the provider\'s own "prompt is too long" error', async () => {
    const r = await post(model, '/v1/messages', {
      model: 'claude-x',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'word '.repeat(WINDOW) }],
    });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error.message).toMatch(/^prompt is too long: \d+ tokens > 4000 maximum$/);
    expect(model.violations).toHaveLength(1);
  });

  test("the proxy's summary call and the agent's own title call are not loop turns", async () => {
    const chat = (content: string, withTools: boolean) =>
      post(model, '/v1/chat/completions', {
        model: 'm',
        messages: [{ role: 'user', content }],
        ...(withTools ? { tools: [{ type: 'function', function: { name: 'read_file' } }] } : {}),
      });
    await chat('You are writing a checkpoint of an agent session. Summarize.', true);
    await chat('Give this conversation a title.', false);
    expect(model.turns.slice(-2).map((t) => t.answered)).toEqual(['summary', 'side']);
  });
});
