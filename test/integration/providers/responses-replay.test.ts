import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseSession } from '#src/formats/index.js';
import { textOf } from '#src/messages/message.js';
import { resolveRoute } from '#src/providers/catalog.js';
import { createSummaryClient } from '#src/providers/clients.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { catalogWindow } from '#support/fake-window.js';

/**
 * Assistant items of an imported Responses history go back to the Responses API with the
 * `id`, `status` and `phase` they came with (gpt-5.3-codex and later need
 * `phase` resent on assistant messages), also after the message was changed by clearing.
 */

const answer = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  phase: 'final_answer',
  content: [{ type: 'output_text', text: 'All 12 tests pass.', annotations: [] }],
};
const call = {
  type: 'function_call',
  id: 'fc_01',
  call_id: 'call_A1',
  name: 'shell',
  arguments: '{"cmd":"npm test"}',
  status: 'completed',
};
const doc = {
  model: 'gpt-5.4',
  input: [
    { role: 'user', content: 'Run the tests.' },
    {
      id: 'msg_00',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      phase: 'commentary',
      content: [{ type: 'output_text', text: 'Running them.', annotations: [] }],
    },
    call,
    { type: 'function_call_output', call_id: 'call_A1', output: '12 passing' },
    answer,
    { role: 'user', content: 'Now add a lint step.' },
  ],
};

let srv: FakeServer;
beforeAll(async () => {
  srv = await startFakeOpenAI({ window: catalogWindow('openai', 'gpt-5.4') });
});
afterAll(() => srv.close());

async function sentInput(
  mutate?: (messages: ReturnType<typeof parseSession>['sessions'][0]['messages']) => void,
) {
  const [session] = parseSession(JSON.stringify(doc), { from: 'openai-responses' }).sessions;
  mutate?.(session.messages);
  const route = resolveRoute(
    { provider: 'openai', model: 'gpt-5.4', baseUrl: srv.url },
    { OPENAI_API_KEY: 'k-123456789' },
  );
  await createSummaryClient(route).summarize({
    model: 'gpt-5.4',
    messages: session.messages,
    instructions: 'Summarize.',
  });
  return srv.requests[srv.requests.length - 1].body.input as Record<string, unknown>[];
}

describe('Responses replay of assistant items (D2, O3)', () => {
  it('D2: imported assistant messages and calls replay with their id, status and phase', async () => {
    const input = await sentInput();
    expect(input).toContainEqual(answer);
    expect(input).toContainEqual(call);
    expect(input.find((i) => i.id === 'msg_00')).toMatchObject({ phase: 'commentary', status: 'completed' });
  });

  it('D2: a changed assistant message still keeps its id, status and phase (known fields rebuilt)', async () => {
    const input = await sentInput((ms) => {
      const i = ms.findIndex((m) => m.role === 'assistant' && textOf(m.content) === 'All 12 tests pass.');
      expect(i).toBeGreaterThan(0);
      ms[i] = { ...ms[i], content: 'All 12 tests pass (edited).' };
    });
    expect(input.find((i) => i.id === 'msg_01')).toMatchObject({
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      phase: 'final_answer',
      content: [{ type: 'output_text', text: 'All 12 tests pass (edited).', annotations: [] }],
    });
  });
});
