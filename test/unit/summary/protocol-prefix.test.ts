import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { completeProtocolPrefix } from '#src/summary/protocol-groups.js';

const batch = (ids: string[]): Message =>
  msg.assistant(
    '',
    ids.map((id) => ({ id, name: 'ls', arguments: '{}' })),
  );
const results = (ids: string[]): Message[] => ids.map((id) => msg.tool(id, 'ok', 'ls'));
const ids = (n: number, p = 'c'): string[] => Array.from({ length: n }, (_, k) => `${p}${k}`);

/** Small batches are checked pairwise, large ones with a Set (bounded memory): both cut alike. */
describe('the protocol-complete prefix (§0)', () => {
  for (const n of [2, 16, 17, 40])
    it(`§0: a batch of ${n} calls answered in any order is complete; a repeated or unknown answer cuts before it`, () => {
      const calls = ids(n);
      const answered = [msg.user('go'), batch(calls), ...results([...calls].reverse()), msg.user('next')];
      expect(completeProtocolPrefix(answered)).toBe(answered.length);
      const repeated = [msg.user('go'), batch(calls), ...results(calls.slice(0, -1)), ...results([calls[0]])];
      expect(completeProtocolPrefix(repeated)).toBe(1);
      const unknown = [msg.user('go'), batch(calls), ...results(['other'])];
      expect(completeProtocolPrefix(unknown)).toBe(1);
      const open = [msg.user('go'), batch(calls), ...results(calls.slice(1))];
      expect(completeProtocolPrefix(open)).toBe(1);
      const dup = [msg.user('go'), batch([...calls, calls[n - 1]]), ...results(calls)];
      expect(completeProtocolPrefix(dup)).toBe(1);
    });

  it('§0: batches one after another each start open, so an id answered in an earlier batch is open again', () => {
    const h = [msg.user('go'), batch(['a', 'b']), ...results(['b', 'a']), batch(['a']), ...results(['a'])];
    expect(completeProtocolPrefix(h)).toBe(h.length);
    expect(completeProtocolPrefix([msg.user('go'), batch(['a', '']), ...results(['a'])])).toBe(1);
  });
});
