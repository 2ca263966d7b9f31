import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '../../../src/model/message.js';
import { isRequestHistoryValid, normalizeHistory } from '../../../src/projection/index.js';
import { isProtocolValid } from '../../../src/summary/index.js';
import { call, deepFreeze } from './helpers.js';

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
    expect(normalizeHistory(out)).toBe(out); // N5
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
