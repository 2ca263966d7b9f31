import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { parseRequest, writeRequest, type ProtocolName } from '#src/serve/protocols.js';
import { splicedRequest } from '#src/serve/list-splice.js';
import { topLevelArrayAt } from '#src/serve/json-splice.js';
import { groupOf, itemsOf } from '#src/formats/round-trip.js';

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

// Fields the proxy does not model, numbers JSON.parse rounds, escapes and key orders of the client's own.
const anthropicBody = (space?: number) =>
  JSON.stringify(
    {
      model: 'claude-sonnet-4-5',
      max_tokens: 300,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: [
        // A system message inside the list (a beta Claude Code sends) stays an item of it.
        { role: 'system', content: 'Project rules: be careful.' },
        { content: 'Read a.ts then b.ts.', role: 'user' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Both files.', signature: 'c2ln' },
            { type: 'text', text: 'Reading both.' },
            { type: 'tool_use', id: 'c1', name: 'read_file', input: { path: 'a.ts', n: 1.5 } },
            { type: 'tool_use', id: 'c2', name: 'read_file', input: { path: 'b.ts' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'A '.repeat(50) },
            { tool_use_id: 'c2', type: 'tool_result', content: [{ type: 'text', text: 'B "q" \\ é' }] },
            { type: 'text', text: 'Now the tests.', extra_field: { kept: true } },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }], id: 'msg_1' },
        { role: 'user', content: 'And c.ts?' },
      ],
      tools: [{ name: 'read_file', input_schema: { type: 'object' } }],
      temperature: 1.0,
    },
    null,
    space,
  );

const responsesBody = (space?: number) =>
  JSON.stringify(
    {
      model: 'gpt-5',
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'You are terse.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Read a.ts then b.ts.' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'ZW5j' },
        { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'read_file', arguments: '{"p":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'A '.repeat(50) },
        {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Reading b.ts.', annotations: [] }],
        },
        { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: 'B "q" \\ é' },
        { type: 'message', role: 'user', content: 'Now the tests.' },
      ],
      tools: [{ type: 'function', name: 'read_file', parameters: { type: 'object' } }],
      max_output_tokens: 300,
    },
    null,
    space,
  );

const CASES: Array<[ProtocolName, (space?: number) => string, string, string]> = [
  ['gemini', geminiBody, GEMINI_URL, 'contents'],
  ['openai-chat', chatBody, '/v1/chat/completions', 'messages'],
  ['anthropic', anthropicBody, '/v1/messages', 'messages'],
  ['openai-responses', responsesBody, '/v1/responses', 'input'],
];

/** The projected conversation with its first tool result cleared (a changed copy) and a summary up front. */
function changed(messages: readonly Message[]): Message[] {
  const first = messages.findIndex((m) => m.role === 'tool');
  const out = messages.map((m, i) => (i === first ? { ...m, content: '{"cleared":"tool_result"}' } : m));
  return [msg.user('Summary of what came before.'), ...out];
}

/** How many list items the projection left whole: every message of their group kept, in its place. */
function keptItems(protocol: ProtocolName, sent: readonly Message[], projected: readonly Message[]): number {
  const format = protocol;
  const groups = new Map<number, Message[]>();
  for (const m of sent) {
    const g = groupOf(m, format);
    if (g !== undefined) groups.set(g, [...(groups.get(g) ?? []), m]);
  }
  let n = 0;
  for (const ms of groups.values()) {
    const at = projected.indexOf(ms[0]);
    if (at >= 0 && ms.every((m, k) => projected[at + k] === m)) {
      const span = itemsOf(ms[0], format)!;
      n += span[1] - span[0] + 1;
    }
  }
  return n;
}

describe('serve: a changed request keeps the client bytes of the items it did not change', () => {
  for (const [protocol, body, url, key] of CASES)
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
          const own = topLevelArrayAt(text, key)!.items.map(([a, b]) => text.slice(a, b));
          const out = topLevelArrayAt(spliced!, key)!.items.map(([a, b]) => spliced!.slice(a, b));
          const kept = keptItems(protocol, parsed.messages, projected);
          expect(out.filter((item) => own.includes(item)).length).toBeGreaterThanOrEqual(kept);
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

/** Bodies written by hand: number texts JSON.parse changes, unicode escapes, unknown fields, odd key orders. */
const ODD: Array<[ProtocolName, string, string]> = [
  [
    'anthropic',
    '/v1/messages',
    `{"temperature":1.0,"model":"claude-sonnet-4-5","messages":[
  {"content":"Read a.ts \\u00e9","role":"user"},
  {"role":"assistant","content":[{"input":{"path":"a.ts","n":1.0,"big":1e400},"type":"tool_use","id":"c1","name":"read_file"}]},
  {"role":"user","x_unknown":2.50,"content":[{"type":"tool_result","tool_use_id":"c1","content":"${'A '.repeat(40)}"}]},
  {"content":"Next \\ud83d\\ude00","role":"user","x_other":{"k":[1.0]}}
 ],"max_tokens":300}`,
  ],
  [
    'openai-responses',
    '/v1/responses',
    `{"model":"gpt-5","input":[
  {"content":"Read a.ts \\u00e9","role":"user"},
  {"type":"function_call","z":1.0,"call_id":"c1","name":"read_file","arguments":"{\\"n\\":1.0}"},
  {"call_id":"c1","x_unknown":2.50,"type":"function_call_output","output":"${'A '.repeat(40)}"},
  {"type":"message","role":"user","content":[{"type":"input_text","text":"Next \\ud83d\\ude00","x":1e400}]}
 ],"temperature":1.0,"max_output_tokens":300}`,
  ],
];

describe('serve: a changed Anthropic or Responses body keeps the bytes the projection does not own', () => {
  for (const [protocol, url, text] of ODD)
    it(`D2: ${protocol}: unchanged items, number texts, escapes and unknown fields as the client wrote them`, () => {
      const parsed = parseRequest(protocol, text, false, url);
      const key = protocol === 'anthropic' ? 'messages' : 'input';
      const own = topLevelArrayAt(text, key)!.items.map(([a, b]) => text.slice(a, b));
      const tool = parsed.messages.findIndex((m) => m.role === 'tool');
      const cleared = parsed.messages.map((m, i) => (i === tool ? { ...m, content: 'cleared' } : m));
      const spliced = splicedRequest(text, parsed, cleared)!;
      const out = topLevelArrayAt(spliced, key)!.items.map(([a, b]) => spliced.slice(a, b));
      // Every item but the cleared one is the client's bytes, in place.
      expect(out).toHaveLength(own.length);
      for (const i of [0, 1, 3]) expect(out[i]).toBe(own[i]);
      // The cleared item is written anew with its unknown field and that field's number text.
      expect(out[2]).toContain('"x_unknown":2.50');
      expect(out[2]).toContain('cleared');
      expect(out[2]).not.toContain('A A');
      // Around the list, the body is the client's own.
      const list = topLevelArrayAt(text, key)!;
      const at = topLevelArrayAt(spliced, key)!;
      expect(spliced.slice(0, at.open)).toBe(text.slice(0, list.open));
      expect(spliced.slice(at.close)).toBe(text.slice(list.close));
      // Unchanged, the body is the client's text itself.
      expect(splicedRequest(text, parsed, parsed.messages)).toBe(text);
    });
});
