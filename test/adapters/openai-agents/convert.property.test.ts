import { describe, expect, it } from '@jest/globals';
import type { AgentInputItem } from '@openai/agents';
import fc from 'fast-check';
import { fromAgentInputItems, toAgentInputItems } from '#src/adapters/openai-agents/index.js';
import { MessageSchema } from '#src/messages/message.js';
import { structuralView } from '#support/adapters/structural-view.js';

// Provider data as providers use it: OpenAI item ids and encrypted reasoning, Anthropic signatures.
const providerData = fc.option(
  fc.oneof(
    fc.record({ itemId: fc.string({ minLength: 1 }), encryptedContent: fc.string() }),
    fc.record({ signature: fc.string(), cacheControl: fc.constant({ type: 'ephemeral' }) }),
  ),
  { nil: undefined },
);
const withData = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc.tuple(arb, providerData).map(([p, d]) => (d === undefined ? p : { ...p, providerData: d }));
const optional = { requiredKeys: [] as never[] };
const id = fc.option(fc.string({ minLength: 1 }), { nil: undefined });
const url = fc.oneof(
  fc.webUrl(),
  fc.base64String().map((b) => `data:image/png;base64,${b}`),
);

const inputText = withData(fc.record({ type: fc.constant('input_text' as const), text: fc.string() }));
const inputImage = withData(
  fc.record(
    {
      type: fc.constant('input_image' as const),
      image: fc.oneof(url, fc.record({ id: fc.string() })),
      detail: fc.constantFrom('low', 'high', 'auto'),
    },
    { requiredKeys: ['type'] },
  ),
);
const inputFile = withData(
  fc.record(
    {
      type: fc.constant('input_file' as const),
      file: fc.oneof(url, fc.record({ id: fc.string() }), fc.record({ url: fc.webUrl() })),
      filename: fc.string(),
    },
    { requiredKeys: ['type'] },
  ),
);
const user = withData(
  fc.record(
    {
      id,
      type: fc.constant('message' as const),
      role: fc.constant('user' as const),
      content: fc.oneof(fc.string(), fc.array(fc.oneof(inputText, inputImage, inputFile), { maxLength: 4 })),
    },
    { requiredKeys: ['role', 'content'] },
  ),
);
const system = withData(
  fc.record(
    { id, type: fc.constant('message' as const), role: fc.constant('system' as const), content: fc.string() },
    { requiredKeys: ['role', 'content'] },
  ),
);
const assistant = withData(
  fc.record(
    {
      id,
      type: fc.constant('message' as const),
      role: fc.constant('assistant' as const),
      status: fc.constantFrom('completed' as const, 'incomplete' as const),
      phase: fc.constantFrom('commentary' as const, 'final_answer' as const),
      content: fc.array(
        fc.oneof(
          withData(fc.record({ type: fc.constant('output_text' as const), text: fc.string() })),
          withData(fc.record({ type: fc.constant('refusal' as const), refusal: fc.string() })),
        ),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: ['role', 'status', 'content'] },
  ),
);
const callId = fc.oneof(fc.string(), fc.constant(''));
const functionCall = withData(
  fc.record(
    {
      id,
      type: fc.constant('function_call' as const),
      callId,
      name: fc.string(),
      namespace: fc.string(),
      status: fc.constant('completed' as const),
      arguments: fc.oneof(
        fc.string(),
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
    },
    { requiredKeys: ['type', 'callId', 'name', 'arguments'] },
  ),
);
const output = fc.oneof(
  fc.string(),
  withData(fc.record({ type: fc.constant('text' as const), text: fc.string() })),
  withData(
    fc.record({
      type: fc.constant('image' as const),
      image: fc.oneof(
        url,
        fc.record({ url: fc.webUrl() }),
        fc.record({ data: fc.uint8Array({ maxLength: 16 }), mediaType: fc.constant('image/png') }),
      ),
    }),
  ),
  fc.array(fc.oneof(inputText, inputImage, inputFile), { maxLength: 3 }),
);
const functionResult = withData(
  fc.record(
    {
      id,
      type: fc.constant('function_call_result' as const),
      callId,
      name: fc.string(),
      status: fc.constantFrom('completed' as const, 'incomplete' as const),
      output,
    },
    { requiredKeys: ['type', 'callId', 'name', 'status', 'output'] },
  ),
);
const reasoning = withData(
  fc.record(
    {
      id,
      type: fc.constant('reasoning' as const),
      content: fc.array(inputText, { maxLength: 2 }),
      rawContent: fc.array(fc.record({ type: fc.constant('reasoning_text' as const), text: fc.string() }), {
        maxLength: 2,
      }),
    },
    { requiredKeys: ['type', 'content'] },
  ),
);
const opaque = fc.oneof(
  fc.record({ type: fc.constant('compaction' as const), encrypted_content: fc.string() }),
  withData(fc.record({ id, type: fc.constant('unknown' as const) }, optional)),
  withData(
    fc.record({
      type: fc.constant('hosted_tool_call' as const),
      name: fc.string(),
      status: fc.constant('completed'),
    }),
  ),
);
const item = fc.oneof(user, system, assistant, functionCall, functionCall, functionResult, reasoning, opaque);

const view = structuralView;

describe('Agents SDK input-item converters', () => {
  it('D1: toAgentInputItems(fromAgentInputItems(x)) equals x for messages, media, calls, results, reasoning and provider data', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 10 }), (generated) => {
        const items = generated as AgentInputItem[];
        const before = JSON.stringify(view(items));
        const canonical = fromAgentInputItems(items);
        for (const m of canonical) expect(MessageSchema.safeParse(m).success).toBe(true);
        // Also after a JSON trip (a session directory stores them as JSON).
        const stored = canonical.map((m) => MessageSchema.parse(JSON.parse(JSON.stringify(m))));
        expect(view(toAgentInputItems(stored))).toEqual(view(items));
        expect(JSON.stringify(view(items))).toBe(before); // the input was not mutated
      }),
      { numRuns: 300 },
    );
  });

  const turn: AgentInputItem[] = [
    { role: 'user', content: 'fix the bug' },
    {
      type: 'reasoning',
      id: 'rs_1',
      content: [{ type: 'input_text', text: 'read first' }],
      providerData: { encryptedContent: 'enc-1' },
    },
    { type: 'function_call', id: 'fc_1', callId: 'c1', name: 'read', arguments: '{"path":"a.py"}' },
    { type: 'reasoning', id: 'rs_2', content: [], providerData: { encryptedContent: 'enc-2' } },
    { type: 'function_call', id: 'fc_2', callId: 'c2', name: 'run', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_result', callId: 'c1', name: 'read', status: 'completed', output: 'print(1)' },
    {
      type: 'function_call_result',
      callId: 'c2',
      name: 'run',
      status: 'completed',
      output: { type: 'text', text: 'a.py' },
    },
  ];

  it('D1: a run of reasoning and calls is one assistant message; results are tool messages with their call ids', () => {
    const canonical = fromAgentInputItems(turn);
    expect(canonical.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(canonical[1].toolCalls).toEqual([
      { id: 'c1', name: 'read', arguments: '{"path":"a.py"}' },
      { id: 'c2', name: 'run', arguments: '{"cmd":"ls"}' },
    ]);
    expect(canonical[1].reasoning).toBe('read first');
    expect(canonical[3]).toMatchObject({
      toolCallId: 'c2',
      toolName: 'run',
      content: [{ type: 'text', text: 'a.py' }],
    });
  });

  it('N1: a dropped call takes the reasoning item before it along; a cleared result goes back as text', () => {
    const canonical = fromAgentInputItems(turn);
    const assistant = { ...canonical[1], toolCalls: canonical[1].toolCalls!.slice(0, 1) };
    const back = toAgentInputItems([canonical[0], assistant, { ...canonical[2], content: '[cleared]' }]);
    expect(back.map((i) => ('id' in i && i.id) || i.type || ('role' in i && i.role))).toEqual([
      'user',
      'rs_1',
      'fc_1',
      'function_call_result',
    ]);
    expect(back[3]).toEqual({
      type: 'function_call_result',
      callId: 'c1',
      name: 'read',
      status: 'completed',
      output: '[cleared]',
    });
  });
});
