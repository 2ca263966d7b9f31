import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '../../../src/estimate/index.js';
import { exportSession, parseSession } from '../../../src/formats/index.js';
import { clearOldToolResults } from '../../../src/projection/clear-tool-results.js';

/**
 * Gemini (OpenAI-compatible endpoint) signs each tool call in
 * `extra_content.google.thought_signature` and rejects follow-ups that drop it. The Chat
 * exporter restores it from the import residual also for a call whose result and large
 * arguments were cleared (C6/C7), so the exported request stays acceptable.
 */

afterAll(freeEncoders);
const est = createEstimator();
const big = (tag: string) => `${tag} `.repeat(3_000);
const signed = (id: string, args: string) => ({
  id,
  type: 'function',
  function: { name: 'write_file', arguments: args },
  extra_content: { google: { thought_signature: `sig-${id}` } },
});
const doc = {
  model: 'gemini-3-pro',
  messages: [
    { role: 'user', content: 'Write the files.' },
    { role: 'assistant', content: null, tool_calls: [signed('c1', JSON.stringify({ body: big('old') }))] },
    { role: 'tool', tool_call_id: 'c1', content: big('written') },
    { role: 'user', content: 'And the next one.' },
    { role: 'assistant', content: null, tool_calls: [signed('c2', '{"path":"b.txt"}')] },
    { role: 'tool', tool_call_id: 'c2', content: 'ok' },
  ],
};

describe('openai-chat export keeps Gemini thought signatures (C7, D2)', () => {
  it('C7/D2: a cleared call (stubbed result, placeholder arguments) keeps extra_content.google.thought_signature', () => {
    const [session] = parseSession(JSON.stringify(doc), { from: 'openai-chat' }).sessions;
    const cleared = clearOldToolResults(session.messages, {
      estimator: est,
      localTrigger: 100,
      evidenceBudget: 0,
      policy: { preset: 'vtcode', keepToolUses: 0 },
    });
    expect(cleared.diagnostics.clearedResults).toBeGreaterThan(0);
    const out = JSON.parse(
      exportSession(cleared.messages, 'openai-chat', { meta: session.meta }),
    ) as typeof doc;
    const call = out.messages[1].tool_calls![0];
    expect(call.function.arguments).not.toContain('old old');
    expect(call.extra_content).toEqual({ google: { thought_signature: 'sig-c1' } });
    expect(out.messages[4].tool_calls![0].extra_content).toEqual({ google: { thought_signature: 'sig-c2' } });
  });
});
