import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { exportSession, parseSession, EXPORT_FORMATS } from '#src/formats/index.js';
import { clearOldToolResults } from '#src/projection/clear-tool-results.js';

/**
 * Gemini (OpenAI-compatible endpoint) signs each tool call in
 * `extra_content.google.thought_signature`. A call whose result is cleared loses its signature;
 * a call whose result is kept (protected) keeps it, in every format the history is written in.
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
const text = JSON.stringify(doc);

function clearedSession() {
  const [session] = parseSession(text, { from: 'openai-chat' }).sessions;
  const opts = {
    estimator: est,
    localTrigger: 100,
    evidenceBudget: 0,
    policy: { preset: 'vtcode' as const, keepToolUses: 0 },
  };
  const cleared = clearOldToolResults(session.messages, opts);
  return { session, cleared, again: clearOldToolResults(cleared.messages, opts) };
}

describe('thought signatures of cleared calls are removed, of kept calls kept (C7, D2)', () => {
  it('C7: the Chat export of a cleared call has no extra_content.google.thought_signature; the kept call keeps its own', () => {
    const { session, cleared } = clearedSession();
    expect(cleared.diagnostics.clearedResults).toBe(1);
    const out = JSON.parse(
      exportSession(cleared.messages, 'openai-chat', { meta: session.meta }),
    ) as typeof doc;
    const call = out.messages[1].tool_calls![0];
    expect(call.function.arguments).not.toContain('old old');
    expect(call).not.toHaveProperty('extra_content');
    expect(out.messages[2].content).toContain('"cleared":"tool_result"');
    expect(out.messages[4].tool_calls![0].extra_content).toEqual({ google: { thought_signature: 'sig-c2' } });
  });

  it.each(EXPORT_FORMATS)('C7: the %s export never carries the signature of the cleared call', (format) => {
    const { session, cleared } = clearedSession();
    const out = exportSession(cleared.messages, format, { meta: session.meta });
    expect(out).not.toContain('sig-c1');
    // Canonical and Chat Completions have a place for a call's signature; the kept call keeps it.
    if (format === 'canonical' || format === 'openai-chat') expect(out).toContain('sig-c2');
  });

  it('C7/C8: clearing again changes nothing, signatures included', () => {
    const { session, cleared, again } = clearedSession();
    expect(again.messages).toEqual(cleared.messages);
    expect(exportSession(again.messages, 'openai-chat', { meta: session.meta })).toBe(
      exportSession(cleared.messages, 'openai-chat', { meta: session.meta }),
    );
  });

  it('D2: an uncleared history goes back key for key and byte for byte, every signature included', () => {
    const [session] = parseSession(text, { from: 'openai-chat' }).sessions;
    expect(session.messages[1].toolCalls![0].thoughtSignature).toBe('sig-c1');
    const out = exportSession(session.messages, 'openai-chat', { meta: session.meta });
    expect(JSON.stringify(JSON.parse(out))).toBe(text);
  });

  it('D2: a call signed beside other provider fields keeps them all when nothing was cleared', () => {
    const rich = {
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              ...signed('c9', '{}'),
              extra_content: { google: { thought_signature: 'sig-c9', other: 1 }, vendor: true },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c9', content: 'done' },
      ],
    };
    const raw = JSON.stringify(rich);
    const [session] = parseSession(raw, { from: 'openai-chat' }).sessions;
    const out = exportSession(session.messages, 'openai-chat', { meta: session.meta });
    expect(JSON.stringify(JSON.parse(out))).toBe(raw);
  });
});
