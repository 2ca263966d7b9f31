import { describe, expect, it } from '@jest/globals';
import { exportSession, parseSession } from '#src/formats/index.js';

describe('Responses reasoning items with odd summaries (D2, D3)', () => {
  it('D3: a reasoning summary entry that is null or not an object is kept verbatim, never a TypeError', () => {
    const items = [
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'reasoning', id: 'rs_1', summary: [null, 7, { type: 'summary_text', text: 'thought' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
    ];
    const text = JSON.stringify(items);
    const { sessions } = parseSession(text, { from: 'openai-responses', fileName: 'r.json' });
    const [assistant] = sessions[0].messages.filter((m) => m.role === 'assistant');
    expect(assistant.reasoning).toBe('thought');
    // The opaque item survives byte for byte.
    expect(JSON.parse(exportSession(sessions[0].messages, 'openai-responses'))).toEqual({ input: items });
  });
});
