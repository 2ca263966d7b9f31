import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { wireJson } from '#support/wire-json.js';
import { readFileSync } from 'node:fs';
import { exportSession, parseSession, type ExportFormat, type FormatName } from '#src/formats/index.js';
import type { Message } from '#src/messages/message.js';
import { fixture } from '#support/paths.js';

function roundTrip(text: string, from: FormatName & ExportFormat, fileName?: string): string {
  const r = parseSession(text, { from, fileName });
  const s = r.sessions[0];
  return exportSession(s.messages, from, { meta: s.meta, id: s.id });
}

describe('provider round trips (D2)', () => {
  it.each([
    ['openai-chat', 'openai-chat.json'],
    ['openai-chat', 'openai-chat.jsonl'],
    ['openai-responses', 'openai-responses.json'],
    ['anthropic', 'anthropic.json'],
  ] as const)('D2: %s fixture %s → import → export gives back equivalent JSON', (format, name) => {
    const text = readFileSync(fixture(name), 'utf8');
    const out = roundTrip(text, format, name);
    if (name.endsWith('.jsonl')) {
      const lines = (t: string) =>
        t
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown);
      expect(lines(out)).toEqual(lines(text));
    } else expect(JSON.parse(out)).toEqual(JSON.parse(text));
  });

  it('D2: unknown fields survive byte for byte (serialized values identical)', () => {
    const text = readFileSync(fixture('anthropic.json'), 'utf8');
    const out = JSON.parse(roundTrip(text, 'anthropic')) as { messages: Array<{ content: unknown[] }> };
    const original = JSON.parse(text) as typeof out;
    // compaction block with an unknown field, server tool block, cache_control on tool_use.
    expect(JSON.stringify(out.messages[3].content[0])).toBe(JSON.stringify(original.messages[3].content[0]));
    expect(JSON.stringify(out.messages[1].content[4])).toBe(JSON.stringify(original.messages[1].content[4]));
    expect(JSON.stringify(out.messages[2].content[2])).toBe(JSON.stringify(original.messages[2].content[2]));
  });

  it.each([
    [
      'openai-chat',
      'list',
      '[{"role":"user","content":"hi","__proto__":{"x":1}},{"role":"assistant","content":"ok","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\\"__proto__\\":1}"},"__proto__":[1]}]},{"role":"tool","tool_call_id":"c","content":"r","x":{"__proto__":{"y":2},"z":3}}]',
    ],
    [
      'openai-chat',
      'request with raw numbers',
      '{"__proto__":{"a":1.0},"model":"m","messages":[{"role":"user","content":"hi","x":{"__proto__":2.50}}]}',
    ],
    [
      'anthropic',
      'request',
      '{"__proto__":[],"messages":[{"role":"user","content":[{"type":"text","text":"hi","__proto__":{"x":1}}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"__proto__":{"a":[1]},"b":2}}],"__proto__":null}]}',
    ],
  ] as const)(
    'D2: %s %s: fields named __proto__ survive a round trip, nested ones too',
    (format, _what, text) => {
      const out = roundTrip(text, format);
      expect(JSON.stringify(JSON.parse(out))).toBe(JSON.stringify(JSON.parse(text)));
      for (const literal of text.match(/\d+\.\d+/g) ?? []) expect(out).toContain(literal);
    },
  );

  it.each([
    [
      'openai-chat',
      `[
  {
    "role": "user",
    "content": "hi",
    "x_weight": 1.0,
    "x_trace": 12345678901234567890
  },
  {
    "role": "assistant",
    "content": "hello",
    "x_meta": {
      "score": 2.50,
      "big": [
        9007199254740993,
        1e5
      ]
    }
  }
]
`,
    ],
    [
      'openai-responses',
      `{"type":"message","role":"user","content":"hi","x_weight":1.0,"x_trace":12345678901234567890}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello","x_score":2.50}],"x_big":9007199254740993}
`,
    ],
    [
      'anthropic',
      `{
  "model": "claude-x",
  "temperature": 1.0,
  "max_tokens": 1024,
  "messages": [
    {
      "role": "user",
      "content": "hi",
      "x_trace": 12345678901234567890
    },
    {
      "role": "assistant",
      "content": [
        {
          "type": "text",
          "text": "hello",
          "x_score": 2.50
        }
      ]
    }
  ]
}
`,
    ],
  ] as const)(
    'D2: %s import → export keeps the raw text of numbers in unknown fields (1.0, 2.50, 1e5, big integers)',
    (format, text) => {
      const out = roundTrip(text, format);
      for (const raw of text.match(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[,\s\]}])/g) ?? [])
        expect(out).toContain(raw);
      expect(out).toBe(text);
    },
  );

  it('D1: Anthropic thinking, redacted_thinking and compaction blocks land in reasoningDetails verbatim', () => {
    const text = readFileSync(fixture('anthropic.json'), 'utf8');
    const [s] = parseSession(text, { from: 'anthropic' }).sessions;
    const roles = s.messages.map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user', 'assistant']);
    const a = s.messages[2];
    expect(a.reasoning).toBe('Read both at once.');
    expect(a.reasoningDetails).toEqual([
      { type: 'thinking', thinking: 'Read both at once.', signature: 'EqQBCkYIBRgCKkDsig==' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3redacted' },
    ]);
    expect(a.toolCalls?.map((c) => c.id)).toEqual(['toolu_1', 'toolu_2']);
    expect(s.messages[4].metadata?.isError).toBe(true);
    expect(s.messages[4].toolName).toBe('read');
    expect(s.messages[6].reasoningDetails?.[0]).toMatchObject({
      type: 'compaction',
      x_future_field: [1, 2, 3],
    });
  });

  it('D2: a changed message exports its new content and keeps its unknown top-level keys', () => {
    const text = readFileSync(fixture('openai-chat.json'), 'utf8');
    const [s] = parseSession(text, { from: 'openai-chat' }).sessions;
    const last = s.messages.length - 1;
    const changed: Message[] = s.messages.map((m, i) => (i === last ? { ...m, content: 'shorter' } : m));
    const out = JSON.parse(exportSession(changed, 'openai-chat', { meta: s.meta })) as {
      messages: Array<Record<string, unknown>>;
    };
    expect(out.messages[last]).toEqual({
      role: 'assistant',
      content: 'shorter',
      reasoning_content: 'short',
      x_vendor: { cached: true, score: 0.5 },
    });
    // A cleared tool result does not bring the old text back.
    const cleared = s.messages.map((m) => (m.role === 'tool' ? { ...m, content: '[cleared]' } : m));
    expect(exportSession(cleared, 'openai-chat', { meta: s.meta })).not.toContain('# Notes');
  });

  it('D2: Responses items group into assistant turns with opaque items verbatim', () => {
    const text = readFileSync(fixture('openai-responses.json'), 'utf8');
    const [s] = parseSession(text, { from: 'openai-responses' }).sessions;
    expect(s.messages.map((m) => m.role)).toEqual([
      'user',
      'system',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'assistant',
    ]);
    expect(s.messages[2].toolCalls?.length).toBe(2);
    expect(s.messages[2].reasoningDetails?.[0]).toMatchObject({ encrypted_content: 'gAAAAABencrypted==' });
    expect(s.messages[5].toolCalls?.[0]).toMatchObject({
      name: 'apply_patch',
      freeformInput: '*** Begin Patch\n*** End Patch',
    });
  });

  it('D2: canonical documents round-trip exactly', () => {
    const text = readFileSync(fixture('canonical.json'), 'utf8');
    const r = parseSession(text);
    expect(r.format).toBe('canonical');
    const out = exportSession(r.sessions[0].messages, 'canonical', { id: r.sessions[0].id });
    expect(JSON.parse(out)).toEqual(JSON.parse(text));
  });

  it('D2: provider → canonical → provider keeps the round-trip residual', () => {
    const text = readFileSync(fixture('anthropic.json'), 'utf8');
    const [s] = parseSession(text, { from: 'anthropic' }).sessions;
    const canonical = exportSession(s.messages, 'canonical');
    const [back] = parseSession(canonical).sessions;
    const out = exportSession(back.messages, 'anthropic', { meta: s.meta });
    expect(JSON.parse(out)).toEqual(JSON.parse(text));
  });

  it('D2: cross-format export produces valid provider shapes (Anthropic → Chat and Responses)', () => {
    const text = readFileSync(fixture('anthropic.json'), 'utf8');
    const [s] = parseSession(text, { from: 'anthropic' }).sessions;
    const chat = JSON.parse(exportSession(s.messages, 'openai-chat')) as {
      messages: Array<Record<string, unknown>>;
    };
    expect(chat.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
      'assistant',
    ]);
    expect(chat.messages[3]).toEqual({
      role: 'tool',
      tool_call_id: 'toolu_1',
      content: 'export const a = 1;',
    });
    const resp = JSON.parse(exportSession(s.messages, 'openai-responses')) as {
      input: Array<Record<string, unknown>>;
    };
    expect(resp.input.filter((i) => i.type === 'function_call').map((i) => i.call_id)).toEqual([
      'toolu_1',
      'toolu_2',
    ]);
    // And back: the Chat export re-imports to the same calls and results.
    const again = parseSession(JSON.stringify(chat), { from: 'openai-chat' }).sessions[0].messages;
    expect(again.flatMap((m) => m.toolCalls ?? []).map((c) => c.arguments)).toEqual([
      '{"path":"a.ts"}',
      '{"path":"b.ts"}',
    ]);
  });

  it('D2: random Chat histories with unknown keys round-trip (property)', () => {
    const key = fc.constantFrom('x_a', 'vendor', 'name', 'cache');
    const extra = fc.dictionary(key, wireJson(), { maxKeys: 2 });
    const msgArb = fc.oneof(
      fc.record({ role: fc.constantFrom('system', 'user'), content: fc.string() }),
      fc.record({
        role: fc.constant('tool'),
        tool_call_id: fc.string({ minLength: 1 }),
        content: fc.string(),
      }),
      fc.record({
        role: fc.constant('assistant'),
        content: fc.option(fc.string(), { nil: null }),
        tool_calls: fc.array(
          fc.record({
            id: fc.string({ minLength: 1 }),
            type: fc.constant('function'),
            function: fc.record({ name: fc.string({ minLength: 1 }), arguments: fc.string() }),
          }),
          { maxLength: 3 },
        ),
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(msgArb, extra), { maxLength: 8 }), (pairs) => {
        const messages = pairs.map(([m, x]) => ({ ...x, ...m }));
        const text = JSON.stringify(messages);
        const out = roundTrip(text, 'openai-chat');
        expect(JSON.parse(out)).toEqual(JSON.parse(text));
      }),
      { numRuns: 150 },
    );
  });
});
