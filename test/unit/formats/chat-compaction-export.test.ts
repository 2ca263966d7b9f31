import { describe, expect, it } from '@jest/globals';
import { UserError } from '#src/core/errors.js';
import { exportSession } from '#src/formats/index.js';
import { msg } from '#src/messages/message.js';

const encrypted = msg.assistant('', undefined, {
  reasoningDetails: [{ type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAENC==' }],
});
const anthropicMarker = msg.assistant('Summary: tests pass.', undefined, {
  reasoningDetails: [{ type: 'compaction', content: 'Summary: tests pass.', signature: 'sig' }],
  metadata: { nativeSummary: true },
});

describe('openai-chat export of compacted histories', () => {
  it('D2: an encrypted compaction item cannot become an empty assistant message: one-line error naming the formats that carry it', () => {
    const go = () => exportSession([msg.user('hi'), encrypted, msg.user('next')], 'openai-chat');
    expect(go).toThrow(UserError);
    expect(go).toThrow(
      'openai-chat cannot carry the provider compaction item of message 2 (it has no summary text); write openai-responses or canonical instead',
    );
  });

  it('D2: a compaction block with its summary text is exported as that text', () => {
    const doc = JSON.parse(exportSession([anthropicMarker, msg.user('next')], 'openai-chat')) as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(doc.messages[0]).toEqual({ role: 'assistant', content: 'Summary: tests pass.' });
  });
});
