import { describe, expect, it } from '@jest/globals';
import { exportGemini, importGemini } from '#src/formats/gemini.js';
import type { Message } from '#src/messages/message.js';

const body = {
  contents: [
    {
      role: 'user',
      parts: [{ text: 'Read a.txt and b.txt.' }, { inlineData: { mimeType: 'image/png', data: 'iVBO' } }],
    },
    {
      role: 'model',
      parts: [
        { thought: true, text: 'Two files.' },
        { text: 'Reading both.', thoughtSignature: 'c2ln' },
        {
          functionCall: { name: 'read_file', args: { file_path: 'a.txt' } },
          thoughtSignature: 'skip_thought_signature_validator',
        },
        { functionCall: { name: 'read_file', args: { file_path: 'b.txt' } } },
      ],
    },
    {
      role: 'user',
      parts: [
        { functionResponse: { id: 'read_file-1', name: 'read_file', response: { output: 'AAA' } } },
        {
          functionResponse: { id: 'read_file-2', name: 'read_file', response: { content: 'BBB', lines: 1 } },
        },
        { text: 'Both read?' },
      ],
    },
    { role: 'model', parts: [{ functionCall: { id: 'c3', name: 'glob', args: { pattern: '*' } } }] },
    {
      role: 'user',
      parts: [{ functionResponse: { id: 'c3', name: 'glob', response: { output: 'a.txt b.txt' } } }],
    },
  ],
  systemInstruction: { role: 'user', parts: [{ text: 'You are an agent.' }] },
  tools: [{ functionDeclarations: [{ name: 'read_file' }, { name: 'glob' }] }, { googleSearch: {} }],
  generationConfig: { temperature: 1.0, thinkingConfig: { includeThoughts: true } },
};
// Number text JSON.parse loses (`1.0`) is written back as it came.
const text = JSON.stringify(body).replace('"temperature":1,', '"temperature":1.0,');

describe('formats: Gemini generateContent requests', () => {
  it('D2: a request comes back exactly as it was (every part and field, key order and number text too)', () => {
    const s = importGemini(text, 'request body');
    expect(exportGemini(s.messages, s.meta)).toBe(
      `${JSON.stringify(JSON.parse(text), null, 2).replace('"temperature": 1,', '"temperature": 1.0,')}\n`,
    );
  });

  it('N1: results pair with their calls by id, else by name in order; ids the wire did not carry are never written', () => {
    const { messages } = importGemini(text, 'request body');
    const calls = messages.flatMap((m) => m.toolCalls ?? []);
    const results = messages.filter((m) => m.role === 'tool');
    expect(results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.id));
    expect(results.map((r) => r.content)).toEqual([
      'AAA',
      JSON.stringify({ content: 'BBB', lines: 1 }),
      'a.txt b.txt',
    ]);
    // Rebuilt from canonical messages alone (no round-trip markers), no made-up id appears.
    const bare = messages.map(({ metadata, ...m }) =>
      m.role === 'tool' ? { ...m, metadata: { geminiId: metadata?.geminiId ?? null } } : m,
    ) as Message[];
    const out = exportGemini(bare);
    expect(out).not.toContain('gemini-call:');
    const rebuilt = JSON.parse(out).contents;
    expect(rebuilt[1].parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall.id)).toEqual([
      undefined,
      undefined,
    ]);
    expect(rebuilt[2].parts.map((p: any) => p.functionResponse?.id)).toEqual([
      'read_file-1',
      'read_file-2',
      undefined,
    ]);
  });

  it('C1: a cleared result goes out as its new text under its own id; the others stay exact', () => {
    const s = importGemini(text, 'request body');
    const cleared = s.messages.map((m) =>
      m.role === 'tool' && m.toolCallId !== undefined && m.content === 'AAA'
        ? { ...m, content: '[cleared]' }
        : m,
    );
    const out = JSON.parse(exportGemini(cleared, s.meta));
    expect(out.contents[2].parts[0]).toEqual({
      functionResponse: { id: 'read_file-1', name: 'read_file', response: { output: '[cleared]' } },
    });
    expect(out.contents[4]).toEqual(body.contents[4]);
    expect(out.contents[1]).toEqual(body.contents[1]);
  });

  it('a signed call keeps its signature when its message changes; with other arguments it goes with the marker for unsigned calls', () => {
    const signed = JSON.stringify({
      contents: [
        { role: 'user', parts: [{ text: 'Go.' }] },
        {
          role: 'model',
          parts: [
            {
              functionCall: { name: 'read_file', args: { file_path: 'a.txt' } },
              thoughtSignature: 'c2lnLWE=',
            },
            {
              functionCall: { name: 'read_file', args: { file_path: 'b.txt' } },
              thoughtSignature: 'c2lnLWI=',
            },
          ],
        },
      ],
    });
    const s = importGemini(signed, 'request body');
    const changed = s.messages.map((m) =>
      m.toolCalls
        ? {
            ...m,
            toolCalls: m.toolCalls.map((c, k) => (k === 1 ? { ...c, arguments: '[input cleared]' } : c)),
          }
        : m,
    );
    const parts = JSON.parse(exportGemini(changed, s.meta)).contents[1].parts;
    expect(parts.map((p: any) => p.thoughtSignature)).toEqual([
      'c2lnLWE=',
      'skip_thought_signature_validator',
    ]);
    expect(parts).toHaveLength(2);
  });

  it('D3: a malformed request is one line naming the field', () => {
    const bad = JSON.stringify({ contents: [{ role: 'model', parts: [{ functionCall: { args: {} } }] }] });
    expect(() => importGemini(bad, 'request body')).toThrow(
      /^request body: contents\[0\]\.parts\[0\]\.functionCall\.name/,
    );
    expect(() => importGemini('{"contents": 3}', 'request body')).toThrow(/^request body: contents: /);
  });
});
