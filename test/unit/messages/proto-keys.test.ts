import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { z } from 'zod';
import { MessageSchema, type Json, type Message } from '#src/messages/message.js';
import { copyOfPlainMessage, isPlainMessage, validatedCopies } from '#src/session/plain-message.js';
import { exportCanonical, importCanonical } from '#src/formats/canonical.js';
import { jsonEqual } from '#src/formats/residual.js';
import {
  expectKeptCopy,
  expectPlainPrototypes,
  jsonWithProtoKeys,
  protoKeyMessage,
} from '#support/proto-keys.js';

/**
 * JSON can hold a key named `__proto__`. A message's JSON fields keep it as a key, never as the
 * copy's prototype: through the message schema, the quick copy of plain messages (the same
 * copy, key order included) and the canonical session file.
 */

describe('keys named __proto__ in a message (D1, kept verbatim)', () => {
  it('D1: the message schema keeps them in metadata and reasoning details, nested too, as plain keys', () => {
    const m = protoKeyMessage();
    const parsed = MessageSchema.parse(m);
    expectKeptCopy(parsed, m);
    expect(Object.keys(parsed.metadata!)).toEqual(['2', 'source', '__proto__', 'kept']);
    expect(parsed.metadata!.__proto__).toEqual(m.metadata!.__proto__);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('D1: a plain message with them takes the quick copy, which equals the schema’s', () => {
    const m = protoKeyMessage();
    expect(isPlainMessage(m)).toBe(true);
    const copy = copyOfPlainMessage(m);
    expectKeptCopy(copy, m);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(MessageSchema.parse(m)));
    expect(validatedCopies([m], 'append: message')).toEqual([copy]);
  });

  it('D1: on random JSON with them, schema and quick copy keep every key in order and agree', () => {
    const message = fc.record(
      {
        role: fc.constant('user' as const),
        content: fc.string(),
        reasoningDetails: fc.array(jsonWithProtoKeys.json, { maxLength: 2 }),
        metadata: jsonWithProtoKeys.object,
      },
      { noNullPrototype: true },
    );
    fc.assert(
      fc.property(message, (m: Message) => {
        const parsed = MessageSchema.parse(m);
        expectKeptCopy(parsed, m);
        expect(jsonEqual(parsed, m)).toBe(true);
        expect(isPlainMessage(m)).toBe(true);
        const copy = copyOfPlainMessage(m);
        expectKeptCopy(copy, m);
        expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
      }),
      { numRuns: 300 },
    );
  });

  it('D1: JSON compared as equal only when both hold the same __proto__ keys', () => {
    const withKey = JSON.parse('{"__proto__":{},"x":1}') as Json;
    expect(jsonEqual(withKey, { x: 1, y: {} })).toBe(false);
    expect(jsonEqual({ x: 1, y: {} }, withKey)).toBe(false);
    expect(jsonEqual(withKey, JSON.parse('{"x":1,"__proto__":{}}'))).toBe(true);
  });

  it('D1: a canonical session file keeps them through export and import', () => {
    const m = protoKeyMessage();
    const [session] = importCanonical(exportCanonical([m])).sessions;
    expectKeptCopy(session!.messages[0], m);
    const doc = JSON.parse(
      '{"format":"compactor.canonical","version":1,"meta":{"__proto__":{"a":1}},"messages":[]}',
    );
    const meta = importCanonical(JSON.stringify(doc)).sessions[0]!.meta;
    expect(JSON.stringify(meta)).toBe('{"__proto__":{"a":1}}');
    expectPlainPrototypes(meta);
  });

  it('D1: a JSON Schema can still be made of the message schema', () => {
    const schema = z.toJSONSchema(MessageSchema) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toContain('metadata');
  });

  it('D1: what is not JSON is still refused, naming the path to the bad part', () => {
    const bad = (metadata: unknown) =>
      MessageSchema.safeParse({ role: 'user', content: 'x', metadata }).error?.issues[0];
    expect(bad({ a: { b: Number.NaN } })).toMatchObject({ path: ['metadata', 'a', 'b'] });
    expect(bad(JSON.parse('{"__proto__":[1,{"u":null}]}'))).toBeUndefined();
    expect(bad({ __proto__: [] })).toMatchObject({ path: ['metadata'] }); // an array given as prototype: not a plain object
    expect(bad([1])?.message).toMatch(/expected object, received array/);
    expect(bad({ d: new Date(0) })?.message).toMatch(/received Date/);
    expect(bad({ [Symbol('s')]: 1 })).toMatchObject({ path: ['metadata'] });
  });
});
