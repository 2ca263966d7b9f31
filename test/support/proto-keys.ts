import { expect } from '@jest/globals';
import fc from 'fast-check';
import type { Json, Message } from '#src/messages/message.js';

/**
 * JSON with keys named `__proto__` (JSON.parse makes such a key an own key; built from entries,
 * so is it here), and the checks that a copy kept them as keys.
 */

const key = fc.oneof(fc.constant('__proto__'), fc.constantFrom('a', 'b', '1', 'constructor'), fc.string());

/** JSON values whose objects often hold a `__proto__` key, at any depth. */
export const jsonWithProtoKeys = fc.letrec<{ json: Json; object: { [key: string]: Json } }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('json'), { maxLength: 3 }),
    tie('object'),
  ),
  object: fc
    .array(fc.tuple(key, tie('json')), { maxLength: 4 })
    .map((entries) => Object.fromEntries(entries) as { [key: string]: Json }),
}));

/** A message whose metadata, reasoning details and tool-call arguments hold `__proto__` keys. */
export function protoKeyMessage(): Message {
  const nested = JSON.parse(
    '{"__proto__":{"polluted":true,"__proto__":[{"__proto__":null}]},"kept":1,"2":"two"}',
  ) as { [key: string]: Json };
  return {
    role: 'assistant',
    content: 'calling',
    toolCalls: [{ id: 'c1', name: 'set', arguments: '{"__proto__":{"x":1}}' }],
    reasoningDetails: [nested, [JSON.parse('{"__proto__":"s"}') as Json]],
    metadata: { source: 'test', ...nested },
  };
}

/** Every object in `v` has Object.prototype (an assigned `__proto__` key would have set another). */
export function expectPlainPrototypes(v: unknown): void {
  if (Array.isArray(v)) return v.forEach(expectPlainPrototypes);
  if (v === null || typeof v !== 'object') return;
  expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  for (const k of Object.keys(v)) expectPlainPrototypes((v as Record<string, unknown>)[k]);
}

/** `copy` holds the same JSON as `original`, key order and `__proto__` keys included, and nothing of it but texts. */
export function expectKeptCopy(copy: unknown, original: unknown): void {
  expect(JSON.stringify(copy)).toBe(JSON.stringify(original));
  expectPlainPrototypes(copy);
  expectNothingShared(copy, original);
}

function expectNothingShared(a: unknown, b: unknown): void {
  if (a === null || typeof a !== 'object') return;
  expect(a).not.toBe(b);
  for (const k of Object.keys(a))
    expectNothingShared((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
}
