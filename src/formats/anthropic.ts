import { z } from 'zod';
import { put } from '../messages/json-copy.js';
import type { Json, Message } from '../messages/message.js';
import {
  assistantFromContent,
  assistantToAnthropic,
  checkContent,
  contentFromBlocks,
  contentToBlocks,
  userFromContent,
  userToAnthropic,
} from './anthropic-blocks.js';
import { inputError, placeOf, validate } from './input-error.js';
import { parseJson, type SessionText } from './json-text.js';
import { envelopeOf, providerMetaFor, writeDocument } from './provider-envelope.js';
import { attachRoundTrip, exportGroups, type ImportedGroup } from './round-trip.js';
import { textOf } from '../messages/message.js';
import { messagesDocumentFormat } from './detect.js';
import type { ImportResult, SessionFormat } from './types.js';

/** Anthropic Messages request: `{system?, messages:[{role, content}]}`. */
const AnthropicMessageSchema = z.looseObject({
  // `system` inside `messages` is a beta the API accepts (Claude Code sends it).
  role: z.enum(['user', 'assistant', 'system']),
  content: z.unknown(),
});
const AnthropicDocSchema = z.looseObject({
  system: z.unknown().optional(),
  messages: z.array(z.unknown()),
});

function buildMessages(ms: readonly Message[]): Json[] {
  if (ms[0].role === 'assistant') return ms.map(assistantToAnthropic);
  if (ms[0].metadata?.[IN_MESSAGES] === true)
    return [{ role: 'system', content: contentToBlocks(ms[0].content) }];
  // Anthropic has no mid-conversation system role: such a message travels as user text.
  return [userToAnthropic(ms.map((m) => (m.role === 'system' ? { ...m, role: 'user' as const } : m)))];
}

function buildSystem(ms: readonly Message[]): Json[] {
  if (ms.length === 1 && typeof ms[0].content === 'string') return [ms[0].content];
  const blocks: Json[] = [];
  for (const m of ms) {
    const c = contentToBlocks(m.content);
    if (typeof c === 'string') blocks.push({ type: 'text', text: c });
    else if (Array.isArray(c)) blocks.push(...c);
  }
  return [blocks];
}

// Unmarked tool messages (from other formats) and a directly following run of them share
// one user message, as the API requires all results of a batch together.
function defaultGrouping(ms: readonly Message[], start: number): number {
  if (ms[start].role !== 'tool') return 1;
  let n = 1;
  while (start + n < ms.length && ms[start + n].role === 'tool' && !ms[start + n].metadata?.roundTrip) n++;
  return n;
}

/** Imports an Anthropic Messages document; thinking/redacted_thinking/compaction stay verbatim. */
export function importAnthropic(text: SessionText, fileName?: string): ImportResult {
  const where = placeOf(fileName);
  const parsed = parseJson(text, fileName) as { system?: Json; messages?: Json[] };
  const doc = validate(AnthropicDocSchema, parsed, where);
  const systemGroups: ImportedGroup[] = [];
  if (doc.system !== undefined) {
    const sys = checkContent(doc.system, where, 'system');
    systemGroups.push({
      raw: [parsed.system as Json], // the parsed object itself: its raw number texts are known
      messages: [{ role: 'system', content: contentFromBlocks(sys, where, 'system') }],
    });
  }
  const groups: ImportedGroup[] = doc.messages.map((value, i) => {
    const path = `messages[${i}]`;
    const m = validate(AnthropicMessageSchema, value, where, path);
    const content = checkContent(m.content, where, `${path}.content`);
    const messages =
      m.role === 'assistant'
        ? [assistantFromContent(content, where, `${path}.content`)]
        : m.role === 'system'
          ? [systemInMessages(contentFromBlocks(content, where, `${path}.content`))]
          : userFromContent(content, where, `${path}.content`);
    if (messages.length === 0) throw inputError(where, `${path}.content: empty user message`);
    return { raw: [(parsed.messages?.[i] ?? value) as Json], messages };
  });
  const messages = [
    ...attachRoundTrip('anthropic', systemGroups, buildSystem).map((m) => tagSystem(m)),
    ...attachRoundTrip('anthropic', groups, buildMessages),
  ];
  const envelope = envelopeOf(parsed as Record<string, unknown>, 'messages');
  return {
    format: 'anthropic',
    file: fileName,
    sessions: [
      { id: 'main', messages, meta: { provider: { format: 'anthropic', shape: 'object', envelope } } },
    ],
  };
}

/** Marks a system message that came inside `messages`: it goes back there, never into `system`. */
const IN_MESSAGES = 'anthropicInMessages';

const systemInMessages = (content: Message['content']): Message => ({
  role: 'system',
  content,
  metadata: { [IN_MESSAGES]: true },
});

// The top-level system prompt's round-trip group lives in its own numbering.
function tagSystem(m: Message): Message {
  return { ...m, metadata: { ...m.metadata, anthropicSystem: true } };
}

/**
 * Canonical messages of the conversation (after the top-level system prompt) as the items of
 * a Messages request's `messages` list.
 */
export function exportAnthropicItems(messages: readonly Message[]): Json[] {
  return exportGroups('anthropic', messages, buildMessages, defaultGrouping);
}

/** Whether a message is the top-level system prompt as imported (it lives outside `messages`). */
export const isTopLevelSystem = (m: Message): boolean => m.metadata?.anthropicSystem === true;

/** Whether a message goes into `messages` wherever it stands: a system message that came inside it. */
export const isSystemInMessages = (m: Message): boolean => m.metadata?.[IN_MESSAGES] === true;

/** Exports canonical messages as an Anthropic Messages document (leading system messages → `system`). */
export function exportAnthropic(messages: readonly Message[], meta?: Record<string, unknown>): string {
  let k = 0;
  while (k < messages.length && messages[k].role === 'system' && messages[k].metadata?.[IN_MESSAGES] !== true)
    k++;
  const system = messages.slice(0, k);
  const rest = messages.slice(k);
  const p = providerMetaFor(meta, 'anthropic');
  const envelope: Record<string, Json> = { ...(p?.envelope ?? {}) };
  delete envelope.system;
  if (system.length > 0) {
    const marked = system.every((m) => m.metadata?.anthropicSystem === true);
    const value = marked
      ? exportGroups('anthropic', system, buildSystem, (ms) => ms.length)[0]
      : system.map((m) => textOf(m.content)).join('\n\n');
    // Keep `system` where the original had it (before `messages` when new).
    const ordered: Record<string, Json> = {};
    let placed = false;
    for (const [key, v] of Object.entries(p?.envelope ?? {})) {
      if (key === 'system' || (key === 'messages' && !placed)) {
        ordered.system = value;
        placed = true;
      }
      if (key !== 'system') put(ordered, key, v);
    }
    if (!placed) ordered.system = value;
    return writeDocument(exportAnthropicItems(rest), 'messages', 'object', ordered);
  }
  return writeDocument(exportAnthropicItems(rest), 'messages', 'object', envelope);
}

/** Anthropic Messages: `{role, content}` messages with Anthropic blocks, or a request with `system`/`max_tokens`. */
export const anthropicFormat: SessionFormat<'anthropic'> = {
  name: 'anthropic',
  detect: [{ kind: 'document', order: 60, test: (doc) => messagesDocumentFormat(doc) === 'anthropic' }],
  import: importAnthropic,
  importDocument: importAnthropic,
};
