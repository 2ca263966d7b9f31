import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readSessionFile } from '#src/formats/index.js';
import { jsonEqual } from '#src/formats/residual.js';
import { MessageSchema, msg, type Message } from '#src/messages/message.js';
import { copyOfPlainMessage, isPlainMessage } from '#src/session/plain-message.js';

/**
 * The quick check of the history option may only say yes where MessageSchema accepts the
 * value and returns an equal copy (the history check keeps the value as given then); every
 * other value goes through the schema as before (bounded memory).
 */
const schemaKeepsAsGiven = (v: unknown): boolean => {
  const parsed = MessageSchema.safeParse(v);
  return parsed.success && jsonEqual(parsed.data, v);
};

/** A turn's pending messages get the copy the schema would return: the same JSON, key order included, nothing shared but texts. */
const copiedAsTheSchemaDoes = (v: Message): void => {
  const copy = copyOfPlainMessage(v);
  expect(JSON.stringify(copy)).toBe(JSON.stringify(MessageSchema.parse(v)));
  expect(Object.keys(copy)).toEqual(Object.keys(MessageSchema.parse(v)));
  expect(copy).not.toBe(v);
  if (v.metadata !== undefined) expect(copy.metadata).not.toBe(v.metadata);
  if (v.toolCalls !== undefined) expect(copy.toolCalls).not.toBe(v.toolCalls);
};

class Box {
  role = 'user';
  content = 'x';
}

describe('the quick check of plain history messages (D1, bounded memory)', () => {
  it('D1: every message of the bundled sessions is plain, and the schema agrees', () => {
    for (const file of [
      'examples/sessions/django__django-16560.traj.json',
      'examples/sessions/claude-code-orchestrator.jsonl',
    ])
      for (const s of readSessionFile(file).sessions)
        for (const m of s.messages) {
          expect(isPlainMessage(m)).toBe(true);
          expect(schemaKeepsAsGiven(m)).toBe(true);
          copiedAsTheSchemaDoes(m);
        }
    expect(isPlainMessage(msg.assistant('', [{ id: 'c', name: 'n', arguments: '{}' }]))).toBe(true);
    expect(isPlainMessage({ role: 'user', content: [{ type: 'text', text: 'a' }] })).toBe(true);
  });

  it("D1: a plain message out of the schema's key order is copied in its order, as the schema does", () => {
    const shuffled = {
      metadata: { b: [1, { z: null }], a: 'x' },
      toolCalls: [{ arguments: '{}', name: 'n', id: 'c', thoughtSignature: 's' }],
      content: [{ text: 'a', type: 'text' }],
      reasoning: 'r',
      role: 'assistant',
    } as unknown as Message;
    expect(isPlainMessage(shuffled)).toBe(true);
    copiedAsTheSchemaDoes(shuffled);
  });

  it('D1: values the schema rejects or would change are left to the schema', () => {
    const toolCallsWithHole: unknown[] = new Array(3);
    toolCallsWithHole[0] = { id: 'c', name: 'n', arguments: '{}' };
    toolCallsWithHole[2] = { id: 'd', name: 'n', arguments: '{}' };
    const getter = Object.defineProperty({ role: 'user' }, 'content', { get: () => 'x', enumerable: true });
    // A message's own `__proto__` key is no field of a message: the schema drops it.
    const protoKey = JSON.parse('{"role":"user","content":"x","__proto__":{"a":1}}') as unknown;
    const odd: unknown[] = [
      { role: 'user', content: 'x', extra: 1 },
      { role: 'user', content: 'x', toolName: undefined },
      { role: 'robot', content: 'x' },
      { role: 'user', content: 'x', metadata: { n: Number.NaN } },
      { role: 'user', content: 'x', metadata: { n: Infinity } },
      { role: 'user', content: 'x', metadata: { u: undefined } },
      { role: 'user', content: 'x', metadata: [] },
      { role: 'assistant', content: '', toolCalls: toolCallsWithHole },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'n', arguments: '{}', x: 1 }] },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'n' }] },
      { role: 'user', content: [{ type: 'text', text: 'a', cache: true }] },
      { role: 'user', content: [{ type: 'image', url: 'u' }] },
      { role: 'user', content: 'x', [Symbol('s')]: 1 },
      new Box(),
      getter,
      protoKey,
      null,
      'user',
    ];
    for (const v of odd) expect(isPlainMessage(v)).toBe(false);
  });

  it('D1: on random message-like values, a plain one is always one the schema keeps as given', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const call = fc.record(
      { id: fc.string(), name: fc.string(), arguments: fc.string(), freeformInput: fc.string(), x: fc.nat() },
      { requiredKeys: [] },
    );
    const message = fc.record(
      {
        role: fc.constantFrom('system', 'user', 'assistant', 'tool', 'other'),
        content: fc.oneof(
          fc.string(),
          fc.array(fc.record({ type: fc.constantFrom('text', 'image'), text: fc.string() })),
        ),
        toolCalls: fc.array(call, { maxLength: 3 }),
        toolCallId: fc.oneof(fc.string(), fc.nat()),
        reasoningDetails: fc.array(json, { maxLength: 2 }),
        metadata: fc.oneof(fc.dictionary(fc.string(), json), json),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(message, (v) => {
        if (!isPlainMessage(v)) return;
        expect(schemaKeepsAsGiven(v)).toBe(true);
        copiedAsTheSchemaDoes(v as Message);
      }),
      { numRuns: 2_000 },
    );
  });
});
