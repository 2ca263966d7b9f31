import { describe, expect, it } from '@jest/globals';
import { CompactorOptionsError } from '#src/core/errors.js';
import { msg, type Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';

/**
 * The `history` option is validated message by message and, when nothing is dropped, kept
 * as the caller's own objects (bounded memory: a zod copy of a 100,000-message history
 * cost 50 MB beside the caller's). What the session sees and the errors stay as before.
 */
describe('the history option (D1, bounded memory)', () => {
  it('D1: valid messages are kept as given, not copied', () => {
    const history = [
      msg.user('hi'),
      msg.assistant('', [{ id: 'c1', name: 'ls', arguments: '{}' }]),
      msg.tool('c1', 'a b', 'ls'),
    ];
    const s = createCompactorSession({ history });
    expect(s.history).toEqual(history);
    s.history.forEach((m, i) => expect(m).toBe(history[i]));
    s.close();
  });

  it('D1: keys the message schema does not know are dropped, as a zod parse drops them', () => {
    const odd = { role: 'user', content: 'x', extra: 1, metadata: { a: { b: 2 } } } as unknown as Message;
    const s = createCompactorSession({ history: [odd] });
    expect(s.history).toEqual([{ role: 'user', content: 'x', metadata: { a: { b: 2 } } }]);
    expect(s.history[0]).not.toBe(odd);
    s.close();
  });

  it('D1: a bad message is a one-line options error naming its index and field', () => {
    const bad = [msg.user('ok'), { role: 'robot', content: 'x' }] as unknown as Message[];
    expect(() => createCompactorSession({ history: bad })).toThrow(CompactorOptionsError);
    expect(() => createCompactorSession({ history: bad })).toThrow(
      /options\.history\[1\]\.role: Invalid option/,
    );
    const noContent = [{ role: 'user' }] as unknown as Message[];
    expect(() => createCompactorSession({ history: noContent })).toThrow(/options\.history\[0\]\.content: /);
  });
});
