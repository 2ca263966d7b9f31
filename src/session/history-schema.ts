import { z } from 'zod';
import { jsonEqual } from '../formats/residual.js';
import { MessageSchema, type Message } from '../messages/message.js';

/**
 * The `history` option, checked message by message against {@link MessageSchema}. zod's parse
 * copies every object; holding a copy of a 100,000-message history beside the caller's own
 * cost 50 MB (issue 15, memory). So a message that parses to an equal value (nothing to drop)
 * is kept as given, and only one with keys the schema drops is replaced by its parsed copy:
 * the result is the same as `z.array(MessageSchema)`, and errors name the same paths.
 */
export const HistoryOptionSchema = z.array(
  z.unknown().transform((value, ctx): Message => {
    const parsed = MessageSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path, input: value });
      return z.NEVER;
    }
    return jsonEqual(parsed.data, value) ? (value as Message) : parsed.data;
  }),
);
