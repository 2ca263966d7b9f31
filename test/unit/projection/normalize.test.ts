import { describe, it, expect } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import {
  CANCELED_RESULT_TEXT,
  analyzePairing,
  isRequestHistoryValid,
  normalizeHistory,
} from '#src/projection/index.js';
import { call, deepFreeze } from '#support/projection/helpers.js';

const roles = (h: readonly Message[]) => h.map((m) => (m.role === 'tool' ? `tool:${m.toolCallId}` : m.role));

describe('normalizeHistory', () => {
  it('N1: results bind to the most recent earlier unmatched call with the same id (reused ids)', () => {
    const h = deepFreeze([
      msg.user('go'),
      msg.assistant('', [call('c1')]),
      msg.assistant('', [call('c1')]),
      msg.tool('c1', 'answers second'),
      msg.tool('c1', 'answers first'),
    ]);
    const out = normalizeHistory(h);
    expect(out.map((m) => m.content)).toEqual(['go', '', 'answers first', '', 'answers second']);
    expect(out[1]).toBe(h[1]);
    expect(out[3]).toBe(h[2]);
  });

  it('N1: reused ids in already-valid consecutive batches are left alone', () => {
    const h = [
      msg.assistant('', [call('c1')]),
      msg.tool('c1', 'a'),
      msg.assistant('', [call('c1')]),
      msg.tool('c1', 'b'),
    ];
    expect(normalizeHistory(h)).toBe(h);
  });

  it('N2: early, duplicate, unknown, empty-id, id-less and non-tool-with-id results are dropped', () => {
    const h = deepFreeze([
      msg.user('go'),
      msg.tool('c1', 'early'),
      msg.tool('nope', 'orphan'),
      msg.assistant('', [call('c1'), call('c2')]),
      msg.tool('c1', 'valid'),
      msg.tool('c1', 'duplicate'),
      msg.tool('', 'empty id'),
      { role: 'tool', content: 'no id' } as Message,
      msg.user('carries an id', { toolCallId: 'c2' }),
      msg.assistant('done'),
    ]);
    const a = analyzePairing(h);
    expect([...a.invalid.entries()]).toEqual([
      [1, 'no-earlier-call'],
      [2, 'no-earlier-call'],
      [5, 'already-answered'],
      [6, 'missing-id'],
      [7, 'missing-id'],
      [8, 'not-tool-role'],
    ]);
    const out = normalizeHistory(h);
    expect(roles(out)).toEqual(['user', 'assistant', 'tool:c1', 'tool:c2', 'assistant']);
    expect(out[2].content).toBe('valid');
  });

  it('N3: a call without result gets a synthetic cancellation result after the matched ones, in call order', () => {
    const h = [msg.assistant('', [call('a', 'ls'), call('b', 'cat'), call('c', 'grep')]), msg.tool('b', 'B')];
    const out = normalizeHistory(h);
    expect(roles(out)).toEqual(['assistant', 'tool:b', 'tool:a', 'tool:c']);
    expect(out[2]).toEqual({ role: 'tool', content: CANCELED_RESULT_TEXT, toolCallId: 'a', toolName: 'ls' });
    expect(out[3].toolName).toBe('grep');
  });

  it('N3: calls with an empty id are dropped from the request copy of the assistant message', () => {
    const h = deepFreeze([msg.assistant('x', [call(''), call('k')]), msg.tool('k', 'K')]);
    const out = normalizeHistory(h);
    expect(out[0].toolCalls).toEqual([call('k')]);
    expect(h[0].toolCalls).toHaveLength(2);
    expect(isRequestHistoryValid(out)).toBe(true);
    expect(normalizeHistory([msg.assistant('only', [call('')])])[0]).toEqual(msg.assistant('only'));
  });

  it('N4: intervening system and user messages move after the complete batch', () => {
    const h = [
      msg.assistant('', [call('call_1'), call('call_2')]),
      msg.system('note'),
      msg.tool('call_2', 'two'),
      msg.user('user note'),
      msg.tool('call_1', 'one'),
      msg.assistant('after'),
    ];
    expect(roles(normalizeHistory(h))).toEqual([
      'assistant',
      'tool:call_2',
      'tool:call_1',
      'system',
      'user',
      'assistant',
    ]);
  });

  it('N4: reordered completions directly after their batch are valid and left as they are', () => {
    const h = [
      msg.assistant('', [call('a'), call('b'), call('c')]),
      msg.tool('c', '3'),
      msg.tool('a', '1'),
      msg.tool('b', '2'),
    ];
    expect(isRequestHistoryValid(h)).toBe(true);
    expect(normalizeHistory(h)).toBe(h);
  });

  it('N5: a valid history is returned as the same object; normalizing twice equals once', () => {
    const valid = [msg.user('hi'), msg.assistant('', [call('a')]), msg.tool('a', 'A'), msg.assistant('ok')];
    expect(normalizeHistory(valid)).toBe(valid);
    const broken = [
      msg.assistant('', [call('a'), call('b')]),
      msg.system('s'),
      msg.tool('a', 'A'),
      msg.tool('zz', '?'),
    ];
    const once = normalizeHistory(broken);
    expect(once).not.toBe(broken);
    expect(isRequestHistoryValid(once)).toBe(true);
    expect(normalizeHistory(once)).toBe(once);
  });

  it('N5: repair never mutates the durable history and reuses unchanged message objects', () => {
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('a')]),
      msg.system('s'),
      msg.tool('a', 'A'),
    ]);
    const before = JSON.stringify(h);
    const out = normalizeHistory(h);
    expect(JSON.stringify(h)).toBe(before);
    expect(out).toEqual([h[0], h[1], h[3], h[2]]);
    out.forEach((m) => expect(h).toContain(m));
  });
});
