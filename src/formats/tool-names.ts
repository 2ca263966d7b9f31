import type { Message } from '../messages/message.js';

/**
 * Gives each tool result without a `toolName` the name of the most recent earlier call
 * with its id (N1's binding rule), so stats and clearing can group results by tool.
 * Messages that already have a name, or answer no known call, are returned as they are.
 */
export function fillToolNames(messages: Message[]): Message[] {
  const names = new Map<string, string>();
  let changed = false;
  const out = messages.map((m) => {
    for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
    if (m.role !== 'tool' || m.toolName !== undefined || m.toolCallId === undefined) return m;
    const name = names.get(m.toolCallId);
    if (name === undefined) return m;
    changed = true;
    return { ...m, toolName: name };
  });
  return changed ? out : messages;
}
