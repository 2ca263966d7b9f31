import { describe, expect, it } from '@jest/globals';
import { parseSession } from '#src/formats/index.js';
import { fillToolNames } from '#src/formats/tool-names.js';

/**
 * Tool results get the name of the call they answer (the most recent earlier unanswered call with its id). Importers that mark
 * round trips name them in the copy they make anyway (bounded memory: a second copy of every
 * result of a 100,000-message session was 10 MB); the messages are the same as before.
 */
describe('tool names of imported results (N1)', () => {
  const doc = JSON.stringify([
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'a', type: 'function', function: { name: 'ls', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'a', content: 'x' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'a', type: 'function', function: { name: 'cat', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'a', content: 'y' },
    { role: 'tool', tool_call_id: 'zz', content: 'orphan' },
  ]);

  it('N1: each result is named after the most recent earlier call with its id, keys in the old order', () => {
    const messages = parseSession(doc).sessions[0].messages;
    expect(messages.map((m) => m.toolName)).toEqual([
      undefined,
      undefined,
      'ls',
      undefined,
      'cat',
      undefined,
    ]);
    // The name is the last key, as when fillToolNames copied each result after the import.
    expect(Object.keys(messages[2])).toEqual(['role', 'content', 'toolCallId', 'metadata', 'toolName']);
  });

  it('N1: naming again changes nothing, and unnamed messages are named as fillToolNames names them', () => {
    const messages = parseSession(doc).sessions[0].messages;
    expect(fillToolNames(messages)).toBe(messages);
    const bare = messages.map(({ toolName: _n, ...m }) => m);
    expect(fillToolNames(bare)).toEqual(messages);
  });
});
