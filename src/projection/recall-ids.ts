import { createHash } from 'node:crypto';
import { textOf, type Message } from '../messages/message.js';

/**
 * Recall ids: every tool result the projection clears or shortens is named by a short id
 * derived from its call id and its content, so the same result gets the same id on every run,
 * in every process, and the id resolves from any copy of the session's history (the live
 * one, the durable log, a fork, a restored store).
 */

/** The name of the tool that returns a cleared result by its id. */
export const RECALL_TOOL_NAME = 'recall';

/** What a recall id looks like: `r-` and eight hex digits. */
export const RECALL_ID_PATTERN = /^r-[0-9a-f]{8}$/;

const idCache = new WeakMap<Message, string>();

/** The recall id of a tool result (call id and content; the same on every run). */
export function recallIdOf(result: Message): string {
  const hit = idCache.get(result);
  if (hit !== undefined) return hit;
  const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  const hash = createHash('sha256')
    .update(result.toolCallId ?? '')
    .update('\u0000')
    .update(content)
    .digest('hex');
  const id = `r-${hash.slice(0, 8)}`;
  idCache.set(result, id);
  return id;
}

const MAX_INPUT_CHARS = 80;

/** A call's input as a stub names it: its start, whole when short. */
export function inputPreview(args: string | undefined): string {
  const flat = (args ?? '').replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_INPUT_CHARS ? flat : `${flat.slice(0, MAX_INPUT_CHARS - 1)}…`;
}

/** How much a result held, in plain words: characters and lines. */
export function sizeOf(result: Message): string {
  const text = textOf(result.content);
  let lines = text.length === 0 ? 0 : 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return `${text.length} chars, ${lines} lines`;
}

/**
 * The note a user message ends with when a small window cut it: how large it was, what part is
 * shown, and the recall id that returns it whole.
 */
export function cutMessageNote(totalTokens: number, recallId: string, shown: string): string {
  return (
    `\n\n[compactor: this message had about ${totalTokens.toLocaleString('en-US')} tokens, more than the ` +
    `context window holds, so only ${shown} shown. The whole message is kept: recall ` +
    `with id ${recallId} returns it.]`
  );
}

const CUT_NOTE =
  /\n\n\[compactor: this message had about ([\d,]+) tokens, more than the context window holds, so only [a-z ]+ shown\. The whole message is kept: recall with id (r-[0-9a-f]{8}) returns it\.\]$/;

/**
 * What a cut of user message `m` stands for: its own text without the note an earlier cut left,
 * and the size and recall id of the whole message (the earlier cut's, so a cut of a cut still
 * names the original).
 */
export function cutOriginOf(
  m: Message,
  tokens: number,
): { text: string; totalTokens: number; recallId: string } {
  const text = textOf(m.content);
  const earlier = CUT_NOTE.exec(text);
  if (earlier === null) return { text, totalTokens: tokens, recallId: recallIdOf(m) };
  return {
    text: text.slice(0, earlier.index),
    totalTokens: Number(earlier[1].replace(/,/g, '')),
    recallId: earlier[2],
  };
}
