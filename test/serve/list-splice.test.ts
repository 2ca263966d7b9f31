import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { parseRequest, writeRequest, type ProtocolName } from '#src/serve/protocols.js';
import { splicedRequest } from '#src/serve/list-splice.js';
import { topLevelArrayAt } from '#src/serve/json-splice.js';

/**
 * A changed request is written into the client's own text: the items it did not change keep
 * the client's bytes, and the whole reads as the same JSON as the request written anew.
 */

const GEMINI_URL = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse';

const geminiBody = (space?: number) =>
  JSON.stringify(
    {
      contents: [
        { parts: [{ text: 'Read a.ts then b.ts.' }], role: 'user' },
        {
          parts: [
            { text: 'Reading a.ts.' },
            {
              functionCall: { id: 'c1', args: { path: 'a.ts' }, name: 'read_file' },
              thoughtSignature: 'c2ln',
            },
          ],
          role: 'model',
        },
        {
          parts: [
            { functionResponse: { id: 'c1', name: 'read_file', response: { output: 'A '.repeat(50) } } },
          ],
          role: 'user',
        },
        {
          parts: [
            {
              functionCall: { id: 'c2', args: { path: 'b.ts' }, name: 'read_file' },
              thoughtSignature: 'c2ln',
            },
          ],
          role: 'model',
        },
        {
          parts: [
            { functionResponse: { id: 'c2', name: 'read_file', response: { output: 'B "quoted" \\ é' } } },
          ],
          role: 'user',
        },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }], role: 'user' },
      tools: [{ functionDeclarations: [{ name: 'read_file', parametersJsonSchema: { type: 'object' } }] }],
      generationConfig: { temperature: 1.0, maxOutputTokens: 512 },
    },
    null,
    space,
  );

const chatBody = (space?: number) =>
  JSON.stringify(
    {
      model: 'gpt-4o',
      messages: [
        { content: 'You are terse.', role: 'system' },
        { content: 'Read a.ts then b.ts.', role: 'user' },
        {
          content: null,
          role: 'assistant',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"p":1}' } }],
        },
        { content: 'A '.repeat(50), role: 'tool', tool_call_id: 'c1' },
        { content: 'Now b.ts.', role: 'user', name: 'me' },
      ],
      tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
      max_tokens: 300,
    },
    null,
    space,
  );

const CASES: Array<[ProtocolName, (space?: number) => string, string]> = [
  ['gemini', geminiBody, GEMINI_URL],
  ['openai-chat', chatBody, '/v1/chat/completions'],
];

/** The projected conversation with its first tool result cleared (a changed copy) and a summary up front. */
function changed(messages: readonly Message[]): Message[] {
  const first = messages.findIndex((m) => m.role === 'tool');
  const out = messages.map((m, i) => (i === first ? { ...m, content: '{"cleared":"tool_result"}' } : m));
  return [msg.user('Summary of what came before.'), ...out];
}

describe('serve: a changed request keeps the client bytes of the items it did not change', () => {
  for (const [protocol, body, url] of CASES)
    for (const space of [undefined, 2])
      it(`D2: ${protocol}, ${space === undefined ? 'compact' : 'pretty'} client JSON`, () => {
        const text = body(space);
        const parsed = parseRequest(protocol, text, false, url);
        for (const projected of [parsed.messages, changed(parsed.messages), parsed.messages.slice(2)]) {
          const spliced = splicedRequest(text, parsed, projected);
          expect(spliced).toBeDefined();
          // The same JSON as the request written anew.
          expect(JSON.parse(spliced!)).toEqual(JSON.parse(writeRequest(parsed, projected)));
          // Every item the projection kept is the client's bytes.
          const key = protocol === 'gemini' ? 'contents' : 'messages';
          const own = topLevelArrayAt(text, key)!.items.map(([a, b]) => text.slice(a, b));
          const out = topLevelArrayAt(spliced!, key)!.items.map(([a, b]) => spliced!.slice(a, b));
          const kept = projected.filter((m) => parsed.messages.includes(m)).length;
          expect(out.filter((item) => own.includes(item)).length).toBeGreaterThanOrEqual(
            kept - (protocol === 'gemini' ? 2 : 0),
          );
        }
        // Unchanged, it is the client's text itself.
        expect(splicedRequest(text, parsed, parsed.messages)).toBe(text);
      });

  it('D2: the element spans of a top-level array skip strings with brackets, quotes and escapes', () => {
    const text = '{"a":"[x]","list":[ {"s":"]\\"\\\\"} ,[1,[2]], "q\\"]" ,3 ],"b":{}}';
    const at = topLevelArrayAt(text, 'list')!;
    expect(at.items.map(([a, b]) => text.slice(a, b))).toEqual([
      '{"s":"]\\"\\\\"}',
      '[1,[2]]',
      '"q\\"]"',
      '3',
    ]);
    expect(text[at.close]).toBe(']');
    expect(topLevelArrayAt(text, 'missing')).toBeUndefined();
  });
});
