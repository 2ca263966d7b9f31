import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { exportSession, parseSession } from '#src/formats/index.js';
import { msg } from '#src/messages/message.js';

afterEach(() => {
  jest.restoreAllMocks();
});

const messages = [
  msg.system('You are a coding agent.'),
  msg.user('List the files.'),
  msg.assistant('', [{ id: 'c1', name: 'ls', arguments: '{}' }]),
  msg.tool('c1', 'a.ts\nb.ts'),
  msg.assistant('Two files.'),
];

describe('a session document is parsed once (D2)', () => {
  it.each(['openai-chat', 'anthropic', 'openai-responses', 'canonical'] as const)(
    'D2: detecting and importing %s parses the whole text once, not twice',
    (format) => {
      const text = exportSession(messages, format);
      const parse = jest.spyOn(JSON, 'parse');
      const imported = parseSession(text);
      const wholeTextParses = parse.mock.calls.filter(([t]) => t === text).length;
      expect(imported.format).toBe(format);
      expect(imported.sessions[0].messages.map((m) => m.role)).toEqual(messages.map((m) => m.role));
      expect(wholeTextParses).toBe(1);
    },
  );

  it('D2: a second import of the same text parses it afresh (nothing shared between imports)', () => {
    const text = exportSession(messages, 'openai-chat');
    const a = parseSession(text);
    const b = parseSession(text);
    expect(b.sessions[0].messages).toEqual(a.sessions[0].messages);
    expect(b.sessions[0].messages[1]).not.toBe(a.sessions[0].messages[1]);
  });
});
