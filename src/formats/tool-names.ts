import type { Message } from '../messages/message.js';

/** A tool result with a call id and no name. */
const needsName = (m: Message): m is Message & { toolCallId: string } =>
  m.role === 'tool' && m.toolName === undefined && m.toolCallId !== undefined;

/**
 * Follows a session's messages in order and tells, for each, the name its tool result should
 * get: that of the most recent earlier call with its id (the pairing's binding rule), or undefined when
 * it is not a tool result, already has a name, or answers no known call.
 */
export function toolNamer(): (m: Message) => string | undefined {
  const names = new Map<string, string>();
  return (m) => {
    for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
    return needsName(m) ? names.get(m.toolCallId) : undefined;
  };
}

/**
 * Gives each tool result without a `toolName` the name of the most recent earlier call
 * with its id (see {@link toolNamer}), so stats and clearing can group results by tool.
 * Messages that already have a name, or answer no known call, are returned as they are.
 */
export function fillToolNames(messages: Message[]): Message[] {
  // Importers that name results themselves leave nothing to fill: no pass, no map of every
  // call id (100,000 messages: about 4 MB of garbage).
  if (!messages.some(needsName)) return messages;
  const nameOf = toolNamer();
  let changed = false;
  const out = messages.map((m) => {
    const name = nameOf(m);
    if (name === undefined) return m;
    changed = true;
    return { ...m, toolName: name };
  });
  return changed ? out : messages;
}
