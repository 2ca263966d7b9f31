import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { printRequest } from '#src/runtime/turn/sent-request.js';

const stub = (id: string) => `{"cleared":"tool_result","tool":"read","id":"${id}"}`;

/** One tool step: the call and its result (cleared when `cleared`). */
function step(i: number, cleared = false): Message[] {
  const id = `call-${i}`;
  return [
    msg.assistant('', [{ id, name: 'read', arguments: `{"path":"f${i}"}` }]),
    msg.tool(id, cleared ? stub(id) : `contents of f${i}`, 'read'),
  ];
}

/** A message whose content counts how often it is read. */
function counted(m: Message): { message: Message; reads: () => number } {
  let reads = 0;
  const { content, ...rest } = m;
  const message = { ...rest } as Message;
  Object.defineProperty(message, 'content', {
    enumerable: true,
    get: () => {
      reads++;
      return content;
    },
  });
  return { message, reads: () => reads };
}

describe('the print of the last request sent', () => {
  it('a request that begins with the last one sent looks only at the messages after it', () => {
    const old = [1, 2, 3].flatMap((i) => step(i, i === 2)).map(counted);
    const first = [msg.user('task'), ...old.map((o) => o.message)];
    const { sent } = printRequest(first);
    const readsBefore = old.map((o) => o.reads());
    const next = printRequest([...first, ...step(4, true)], sent);
    expect(next.prefixIntact).toBe(true);
    expect(next.sent.clearedCallIds).toEqual(['call-2', 'call-4']);
    // The messages the last request held are neither printed nor checked for stubs again.
    expect(old.map((o) => o.reads())).toEqual(readsBefore);
  });

  it('says the same as printing the whole request again, whatever changed before its end', () => {
    const base = [msg.user('task'), ...[1, 2, 3, 4].flatMap((i) => step(i))];
    const { sent } = printRequest(base);
    const cases: Record<string, Message[]> = {
      extended: [...base, ...step(5)],
      'the same request': base,
      'a message rebuilt with the same bytes': [...base.slice(0, 3), { ...base[3]! }, ...base.slice(4)],
      'a result cleared in the middle': [...base.slice(0, 4), step(2, true)[1]!, ...base.slice(5)],
      shorter: base.slice(0, 5),
      'a summary instead of the start': [msg.user('summary'), ...base.slice(5), ...step(5, true)],
    };
    for (const [name, request] of Object.entries(cases)) {
      // A copy of the print is one this process did not make: the whole request is printed again.
      const whole = printRequest(request, { ...sent });
      expect({ name, ...printRequest(request, sent) }).toEqual({ name, ...whole });
    }
    expect(printRequest(cases.extended!, sent).prefixIntact).toBe(true);
    expect(printRequest(cases['a message rebuilt with the same bytes']!, sent).prefixIntact).toBe(true);
    expect(printRequest(cases['a result cleared in the middle']!, sent).prefixIntact).toBe(false);
    expect(printRequest(cases.shorter!, sent).prefixIntact).toBe(false);
  });
});
