import { describe, expect, it } from '@jest/globals';
import type { ModelMessage } from 'ai';
import fc from 'fast-check';
import { wireJson } from '#support/wire-json.js';
import { fromModelMessages, toModelMessages } from '#src/adapters/ai-sdk/index.js';
import { MessageSchema } from '#src/messages/message.js';
import { structuralView } from '#support/adapters/structural-view.js';

// Provider options as providers use them: Anthropic signatures and cache control, OpenAI item ids.
const providerOptions = fc.option(
  fc.oneof(
    fc.record({
      anthropic: fc.record({ signature: fc.string(), cacheControl: fc.constant({ type: 'ephemeral' }) }),
    }),
    fc.record({
      openai: fc.record({ itemId: fc.string({ minLength: 1 }), reasoningEncryptedContent: fc.string() }),
    }),
  ),
  { nil: undefined },
);
const withOptions = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc.tuple(arb, providerOptions).map(([p, o]) => (o === undefined ? p : { ...p, providerOptions: o }));

const json: fc.Arbitrary<unknown> = wireJson();
const bytes = fc.uint8Array({ maxLength: 16 });
const url = fc.webUrl().map((u) => new URL(u));
const text = withOptions(fc.record({ type: fc.constant('text' as const), text: fc.string() }));
const image = withOptions(
  fc.record(
    {
      type: fc.constant('image' as const),
      image: fc.oneof(bytes, url, fc.base64String()),
      mediaType: fc.constantFrom('image/png', 'image/jpeg'),
    },
    { requiredKeys: ['type', 'image'] },
  ),
);
const file = withOptions(
  fc.record(
    {
      type: fc.constant('file' as const),
      data: fc.oneof(bytes, url, fc.record({ type: fc.constant('url' as const), url })),
      mediaType: fc.constantFrom('application/pdf', 'text/plain', 'image/png'),
      filename: fc.string(),
    },
    { requiredKeys: ['type', 'data', 'mediaType'] },
  ),
);
const reasoning = withOptions(fc.record({ type: fc.constant('reasoning' as const), text: fc.string() }));
const id = fc.oneof(fc.string(), fc.constant(''));
const toolCall = withOptions(
  fc.record(
    {
      type: fc.constant('tool-call' as const),
      toolCallId: id,
      toolName: fc.string(),
      input: json,
      providerExecuted: fc.boolean(),
    },
    { requiredKeys: ['type', 'toolCallId', 'toolName', 'input'] },
  ),
);
const output = fc.oneof(
  fc.record({ type: fc.constant('text' as const), value: fc.string() }),
  fc.record({ type: fc.constant('json' as const), value: wireJson() }),
  fc.record({ type: fc.constant('error-text' as const), value: fc.string() }),
  fc.record({ type: fc.constant('error-json' as const), value: wireJson() }),
  fc.record(
    { type: fc.constant('execution-denied' as const), reason: fc.string() },
    { requiredKeys: ['type'] },
  ),
  fc.record({
    type: fc.constant('content' as const),
    value: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('text' as const), text: fc.string() }),
        fc.record({
          type: fc.constant('image-data' as const),
          data: fc.base64String(),
          mediaType: fc.constant('image/png'),
        }),
        fc.record({ type: fc.constant('file-url' as const), url: fc.webUrl() }),
      ),
    ),
  }),
);
const toolResult = withOptions(
  fc.record({ type: fc.constant('tool-result' as const), toolCallId: id, toolName: fc.string(), output }),
);
const approval = fc.record({
  type: fc.constant('tool-approval-response' as const),
  approvalId: fc.string(),
  approved: fc.boolean(),
});

const message: fc.Arbitrary<unknown> = fc.oneof(
  withOptions(fc.record({ role: fc.constant('system' as const), content: fc.string() })),
  withOptions(
    fc.record({
      role: fc.constant('user' as const),
      content: fc.oneof(fc.string(), fc.array(fc.oneof(text, image, file), { maxLength: 4 })),
    }),
  ),
  withOptions(
    fc.record({
      role: fc.constant('assistant' as const),
      content: fc.oneof(fc.string(), fc.array(fc.oneof(text, reasoning, toolCall, file), { maxLength: 5 })),
    }),
  ),
  withOptions(
    fc.record({
      role: fc.constant('tool' as const),
      content: fc.array(fc.oneof(toolResult, toolResult, approval), { maxLength: 4 }),
    }),
  ),
);

const view = structuralView;

describe('AI SDK ModelMessage converters', () => {
  it('D1: toModelMessages(fromModelMessages(x)) equals x for text, media, calls, results, reasoning and provider options', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), (messages) => {
        const input = messages as ModelMessage[];
        const before = JSON.stringify(view(input));
        const canonical = fromModelMessages(input);
        // Canonical messages are valid session messages (a session validates what it stores).
        for (const m of canonical) expect(MessageSchema.safeParse(m).success).toBe(true);
        // Also after a JSON trip (a session directory stores them as JSON).
        const stored = canonical.map((m) => MessageSchema.parse(JSON.parse(JSON.stringify(m))));
        expect(view(toModelMessages(stored))).toEqual(view(input));
        expect(JSON.stringify(view(input))).toBe(before); // the input was not mutated
      }),
      { numRuns: 300 },
    );
  });

  it('D1: tool results become canonical tool messages with their call ids; media stay references', () => {
    const canonical = fromModelMessages([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'think', providerOptions: { anthropic: { signature: 'sig' } } },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a.py' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'run', input: { cmd: 'ls' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'read',
            output: { type: 'text', value: 'print(1)' },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'run',
            output: { type: 'error-json', value: { code: 1 } },
          },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'image', image: new Uint8Array([1, 2, 3]), mediaType: 'image/png' }],
      },
    ]);
    expect(canonical.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool', 'user']);
    expect(canonical[0].toolCalls).toEqual([
      { id: 'c1', name: 'read', arguments: '{"path":"a.py"}' },
      { id: 'c2', name: 'run', arguments: '{"cmd":"ls"}' },
    ]);
    expect(canonical[0].reasoning).toBe('think');
    expect(canonical[2]).toMatchObject({ toolCallId: 'c2', content: '{"code":1}' });
    expect(canonical[3].content).toEqual([{ type: 'image', mimeType: 'image/png' }]);
    // A cleared result goes back as text; an error result stays an error.
    const cleared = canonical.map((m) => (m.role === 'tool' ? { ...m, content: '[cleared]' } : m));
    const back = toModelMessages(cleared);
    expect(back[1]).toMatchObject({
      role: 'tool',
      content: [
        { toolCallId: 'c1', output: { type: 'text', value: '[cleared]' } },
        { toolCallId: 'c2', output: { type: 'error-text', value: '[cleared]' } },
      ],
    });
  });
});
