import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { toAnthropicConversation } from '#src/providers/anthropic/convert.js';

describe('the compaction boundary message keeps what came after its block (A3)', () => {
  const block = { type: 'compaction', content: 'Summary so far', signature: 'sig-1', extra: { x: 1 } };

  it('A3: text and tool_use in the same assistant turn as the compaction block are replayed after it', () => {
    // An unpaused compaction response: [compaction, text, tool_use] in one assistant message.
    const history: Message[] = [
      msg.user('old question'),
      msg.assistant(
        'I will run the tests now.',
        [{ id: 'toolu_9', name: 'shell', arguments: '{"cmd":"npm test"}' }],
        {
          reasoningDetails: [block],
        },
      ),
      msg.tool('toolu_9', '12 passing'),
    ];
    expect(toAnthropicConversation(history).messages).toEqual([
      {
        role: 'assistant',
        content: [
          block,
          { type: 'text', text: 'I will run the tests now.' },
          { type: 'tool_use', id: 'toolu_9', name: 'shell', input: { cmd: 'npm test' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: '12 passing' }] },
    ]);
  });

  it('A3: a bare marker (pause_after_compaction) is still replayed as the block alone', () => {
    const history: Message[] = [
      msg.user('old question'),
      msg.assistant('', undefined, { reasoningDetails: [block] }),
      msg.user('next'),
    ];
    expect(toAnthropicConversation(history).messages).toEqual([
      { role: 'assistant', content: [block] },
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ]);
  });
});

describe('the system slot of an Anthropic conversation (S2)', () => {
  it('S2: a leading history system message the parent system prompt already carries is sent once', () => {
    const history: Message[] = [
      msg.system('You are a coding agent.'),
      msg.system('Be brief.'),
      msg.user('go'),
    ];
    expect(toAnthropicConversation(history, 'You are a coding agent.').system).toBe(
      'You are a coding agent.\n\nBe brief.',
    );
    expect(toAnthropicConversation(history).system).toBe('You are a coding agent.\n\nBe brief.');
  });
});
