import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { msg, type Message } from '#src/messages/message.js';
import { isRequestHistoryValid, normalizeHistory } from '#src/projection/index.js';
import { isProtocolValid } from '#src/summary/index.js';
import { call, deepFreeze } from '#support/projection/helpers.js';

const ids = (h: readonly Message[]) =>
  h.map((m) =>
    m.role === 'tool' ? `tool:${m.toolCallId}` : `${m.role}[${(m.toolCalls ?? []).map((c) => c.id)}]`,
  );

describe('a batch that repeats a call id (N1–N3)', () => {
  it('N2/N3: the request keeps one call per id in a batch (providers reject duplicate tool_use ids); the extra result is dropped', () => {
    const h = deepFreeze([
      msg.user('go'),
      msg.assistant('', [call('a'), call('a'), call('b')]),
      msg.tool('a', 'first'),
      msg.tool('a', 'second'),
      msg.tool('b', 'b'),
    ]);
    expect(isRequestHistoryValid(h)).toBe(false);
    const out = normalizeHistory(h);
    expect(ids(out)).toEqual(['user[]', 'assistant[a,b]', 'tool:a', 'tool:b']);
    expect(out[2].content).toBe('first');
    expect(isProtocolValid(out)).toBe(true);
    expect(normalizeHistory(out)).toBe(out); // a valid history comes back as the same object
  });

  it('N3: an unanswered batch with a repeated id gets one call and one cancellation result', () => {
    const out = normalizeHistory(deepFreeze([msg.user('go'), msg.assistant('', [call('a'), call('a')])]));
    expect(ids(out)).toEqual(['user[]', 'assistant[a]', 'tool:a']);
    expect(isProtocolValid(out)).toBe(true);
  });

  it('N1: the same id reused in a later batch is still fine', () => {
    const h = [
      msg.assistant('', [call('a')]),
      msg.tool('a', '1'),
      msg.assistant('', [call('a')]),
      msg.tool('a', '2'),
    ];
    expect(normalizeHistory(h)).toBe(h);
  });
});

describe('normalization checked by an independent validator (N1–N4)', () => {
  const id = fc.constantFrom('a', 'b', '');
  const message: fc.Arbitrary<Message> = fc.oneof(
    fc.constant(msg.user('u')),
    fc.constant(msg.system('s')),
    fc.array(id, { minLength: 1, maxLength: 3 }).map((ids) =>
      msg.assistant(
        '',
        ids.map((i) => call(i)),
      ),
    ),
    id.map((i) => msg.tool(i, 'r')),
    fc.constant(msg.assistant('', undefined, { reasoningDetails: [{ type: 'thinking', signature: 's' }] })),
  );

  it("N1–N4: every request the normalizer emits passes the summary side's protocol check (not only its own analyzer)", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 25 }), (h) => {
        expect(isProtocolValid(normalizeHistory(h))).toBe(true);
      }),
      { numRuns: 500, seed: 7 },
    );
  });
});
