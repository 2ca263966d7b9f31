import { z } from 'zod';
import { jsonEqual } from '../formats/residual.js';
import { MessageSchema, type Message } from '../messages/message.js';
import { isPlainMessage } from './plain-message.js';

/**
 * The `history` option, checked message by message against {@link MessageSchema}. zod's parse
 * copies every object, and `z.array(MessageSchema)` holds each message's copy and parse state
 * until the whole array is done: beside the caller's own 100,000 messages that cost 50 MB
 * of memory. Here each message is parsed alone (its copy is garbage at once); one
 * that parses to an equal value (nothing to drop) is kept as given, and only one with keys the
 * schema drops is replaced by its parsed copy. Result and error paths are those of
 * `z.array(MessageSchema)`.
 */
export const HistoryOptionSchema = z.array(z.unknown()).transform((history, ctx): Message[] => {
  const out = new Array<Message>(history.length);
  for (let i = 0; i < history.length; i++) {
    const value = history[i];
    if (isPlainMessage(value)) {
      out[i] = value as Message;
      continue;
    }
    const parsed = MessageSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: 'custom', message: issue.message, path: [i, ...issue.path], input: value });
      return z.NEVER;
    }
    out[i] = jsonEqual(parsed.data, value) ? (value as Message) : parsed.data;
  }
  return out;
});
