import type { IncomingHttpHeaders } from 'node:http';

/**
 * Headers in which coding agents name their conversation, most specific first: Claude Code
 * (`x-claude-code-session-id`), opencode (`x-session-id`), Codex (`session-id`, `thread-id`).
 */
const AGENT_SESSION_HEADERS = [
  'x-claude-code-session-id',
  'x-session-id',
  'session-id',
  'thread-id',
] as const;

/** The conversation id an agent sends in its headers, if any. */
export function agentSessionId(headers: IncomingHttpHeaders): string | undefined {
  for (const name of AGENT_SESSION_HEADERS) {
    const v = headers[name];
    const value = (Array.isArray(v) ? v[0] : v)?.trim();
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

/**
 * The conversation named by Anthropic's `metadata.user_id`: Claude Code puts a JSON object
 * there whose `session_id` is its conversation; any other value is the id as it is.
 */
export function userIdSession(userId: string | null | undefined): string | undefined {
  if (typeof userId !== 'string' || userId.trim() === '') return undefined;
  if (userId.trimStart().startsWith('{')) {
    try {
      const v = JSON.parse(userId) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        // Without a session the object names only the device and account, shared by every conversation.
        const id = (v as Record<string, unknown>).session_id;
        return typeof id === 'string' && id.trim() !== '' ? id.trim() : undefined;
      }
    } catch {
      // Not JSON after all: the text is the id.
    }
  }
  return userId;
}
