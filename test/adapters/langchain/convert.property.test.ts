import { describe, expect, it } from '@jest/globals';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import fc from 'fast-check';
import { wireJson } from '#support/wire-json.js';
import { fromBaseMessages, toBaseMessages } from '#src/adapters/langchain/index.js';
import { MessageSchema } from '#src/messages/message.js';

const id = fc.option(fc.string({ minLength: 1 }), { nil: undefined });
const blocks = fc.array(
  fc.oneof(
    fc.record({ type: fc.constant('text'), text: fc.string() }),
    fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: fc.webUrl() }) }),
    fc.record({ type: fc.constant('reasoning'), reasoning: fc.string() }),
    fc.record({ type: fc.constant('thinking'), thinking: fc.string(), signature: fc.string() }),
  ),
  { maxLength: 4 },
);
const content = fc.oneof(fc.string(), blocks);
const kwargs = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), wireJson(), { maxKeys: 2 });

const message: fc.Arbitrary<BaseMessage> = fc.oneof(
  fc.record({ content: fc.string(), id }).map((f) => new SystemMessage(f)),
  fc.record({ content, id, name: id }).map((f) => new HumanMessage(f as never)),
  fc
    .record({
      content,
      id,
      additional_kwargs: kwargs,
      response_metadata: kwargs,
      tool_calls: fc.array(
        fc.record({
          id,
          name: fc.string(),
          args: fc.dictionary(fc.string(), wireJson(), { maxKeys: 3 }),
        }),
        { maxLength: 3 },
      ),
    })
    .map(
      (f) =>
        new AIMessage({
          ...f,
          tool_calls: f.tool_calls.map((c) => ({ ...c, type: 'tool_call' as const })),
        } as never),
    ),
  fc
    .record({ content, id, tool_call_id: fc.string(), name: id, status: fc.constantFrom('success', 'error') })
    .map((f) => new ToolMessage(f as never)),
);

/** What a LangChain message says, for comparison. */
function view(m: BaseMessage): unknown {
  const calls = (m as AIMessage).tool_calls?.map((c) => ({ id: c.id, name: c.name, args: c.args }));
  return JSON.parse(
    JSON.stringify({
      type: m.type,
      content: m.content,
      id: m.id,
      name: m.name,
      additional_kwargs: m.additional_kwargs,
      response_metadata: m.response_metadata,
      tool_calls: calls,
      tool_call_id: (m as ToolMessage).tool_call_id,
      status: (m as ToolMessage).status,
    }),
  );
}

describe('LangChain BaseMessage converters', () => {
  it('D1: toBaseMessages(fromBaseMessages(x)) says what x says (content blocks, tool calls, ids, kwargs)', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 6 }), (messages) => {
        const canonical = fromBaseMessages(messages);
        for (const m of canonical) expect(MessageSchema.safeParse(m).success).toBe(true);
        const stored = canonical.map((m) => MessageSchema.parse(JSON.parse(JSON.stringify(m))));
        expect(toBaseMessages(stored).map(view)).toEqual(messages.map(view));
      }),
      { numRuns: 200 },
    );
  });

  it('D1: messages and tool calls without ids convert (no crash on outside transcripts)', () => {
    const canonical = fromBaseMessages([
      new AIMessage({ content: 'x', tool_calls: [{ name: 'bash', args: { cmd: 'ls' }, type: 'tool_call' }] }),
      new ToolMessage({ content: 'out', tool_call_id: '' }),
    ]);
    expect(canonical[0].toolCalls).toEqual([{ id: '', name: 'bash', arguments: '{"cmd":"ls"}' }]);
    expect(canonical[1]).toMatchObject({ role: 'tool', toolCallId: '', content: 'out' });
    // A cleared result goes back as text.
    const back = toBaseMessages([canonical[0], { ...canonical[1], content: '[cleared]' }]);
    expect(back[1].content).toBe('[cleared]');
  });

  it('D1: tool-call arguments with an own "__proto__" key keep it as a key, both ways (the random test above once drew one)', () => {
    // JSON.parse makes "__proto__" an own key; copied by assignment it set the copy's prototype
    // instead, and the key was gone from the arguments sent on.
    const args = JSON.parse('{"__proto__": {"admin": true}, "path": "a.ts"}') as Record<string, unknown>;
    const canonical = fromBaseMessages([
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'read', args, type: 'tool_call' }] }),
    ]);
    expect(JSON.parse(canonical[0].toolCalls![0]!.arguments)).toEqual(args);
    expect(canonical[0].toolCalls![0]!.arguments).toBe('{"__proto__":{"admin":true},"path":"a.ts"}');
    const back = toBaseMessages(canonical)[0] as AIMessage;
    const backArgs = back.tool_calls![0]!.args;
    expect(Object.getPrototypeOf(backArgs)).toBe(Object.prototype);
    expect((backArgs as { admin?: unknown }).admin).toBeUndefined();
    expect(JSON.stringify(backArgs)).toBe('{"__proto__":{"admin":true},"path":"a.ts"}');
  });
});
