import { exportAnthropicItems, isSystemInMessages, isTopLevelSystem } from '../formats/anthropic.js';
import { exportGeminiContents } from '../formats/gemini.js';
import { responsesItemsWriter } from '../formats/openai-responses.js';
import { exportOpenAIChatItems } from '../formats/openai-chat.js';
import { stringifyWithRawNumbers } from '../formats/raw-numbers.js';
import { groupOf, itemsOf as roundTripItems, type RoundTripFormat } from '../formats/round-trip.js';
import type { Json, Message } from '../messages/message.js';
import { topLevelArrayAt } from './json-splice.js';
import type { ParsedRequest, ProtocolName } from './protocols.js';

/**
 * A changed request written into the client's own text: the message list's items the projection
 * left as they came keep the client's bytes (its key order, spacing and escapes), and only the
 * items it changed (a cleared result, a summary) are written anew, compactly. A provider caches
 * the longest prefix a request shares with the one before, so a clearing step must not rewrite
 * what comes before the first item it changed, and the requests between steps must repeat it.
 */

/** Where a protocol keeps its message list, and how it writes items of it. */
interface ListWire {
  key: string;
  format: RoundTripFormat;
  /** The messages of the list, of the request as parsed or projected: fixed part and conversation. */
  list(fixed: readonly Message[], conversation: readonly Message[]): readonly Message[];
  /** The writer of items for runs of messages going into the list `all` (made once per body). */
  items(all: readonly Message[]): (messages: readonly Message[]) => Json[];
  /** Whether the body written anew would put the list's messages elsewhere (then it is not spliced). */
  movesOut?(list: readonly Message[]): boolean;
}

const WIRES: Partial<Record<ProtocolName, ListWire>> = {
  gemini: {
    key: 'contents',
    format: 'gemini',
    list: (_fixed, conversation) => conversation,
    items: () => exportGeminiContents,
  },
  // A Chat Completions request's system messages are items of its list like the others.
  'openai-chat': {
    key: 'messages',
    format: 'openai-chat',
    list: (fixed, conversation) => [...fixed, ...conversation],
    items: () => exportOpenAIChatItems,
  },
  // The top-level system prompt is a member of its own; a system message sent inside the list stays there.
  anthropic: {
    key: 'messages',
    format: 'anthropic',
    list: (fixed, conversation) => [...fixed.filter((m) => !isTopLevelSystem(m)), ...conversation],
    items: () => exportAnthropicItems,
    // A leading system message of no list (a summary, say) would be written into `system`.
    movesOut: (list) => list.length > 0 && list[0].role === 'system' && !isSystemInMessages(list[0]),
  },
  // Leading system and developer items are items of the list; `instructions` is a member of its own.
  'openai-responses': {
    key: 'input',
    format: 'openai-responses',
    list: (fixed, conversation) => [...fixed, ...conversation],
    items: responsesItemsWriter,
  },
};

/** The client's messages of one group (a run of list items), and the items' first and last index. */
interface OwnGroup {
  messages: Message[];
  first: number;
  last: number;
}

/** The client's messages of each group of its list, by group; undefined when they do not cover the list in order. */
function groupsOf(wire: ListWire, sent: readonly Message[], count: number): OwnGroup[] | undefined {
  const byGroup: OwnGroup[] = [];
  let last: OwnGroup | undefined;
  for (const m of sent) {
    const g = groupOf(m, wire.format);
    const span = roundTripItems(m, wire.format);
    if (g === undefined || span === undefined) return undefined;
    if (last !== undefined && byGroup[g] === last) {
      last.messages.push(m);
      continue;
    }
    // Groups come in order, each one's items right after the one before.
    if (byGroup[g] !== undefined || span[0] !== (last?.last ?? -1) + 1 || span[1] >= count) return undefined;
    last = { messages: [m], first: span[0], last: span[1] };
    byGroup[g] = last;
  }
  return (last?.last ?? -1) === count - 1 ? byGroup : undefined;
}

/**
 * The body for `projected` (the conversation after the fixed part) written into `text`, the
 * client's own body: items it holds unchanged are copied from it; undefined when the text's list
 * cannot be matched item for item to the request's messages (the body is then written anew).
 */
export function splicedRequest(
  text: string,
  req: ParsedRequest,
  projected: readonly Message[],
): string | undefined {
  const wire = WIRES[req.protocol];
  if (wire === undefined || req.meta.geminiOuter !== undefined) return undefined;
  const at = topLevelArrayAt(text, wire.key);
  if (at === undefined) return undefined;
  const byGroup = groupsOf(wire, wire.list(req.prefix, req.messages), at.items.length);
  if (byGroup === undefined) return undefined;
  const out = wire.list(req.prefix, projected);
  if (wire.movesOut?.(out) === true) return undefined;
  const pieces: string[] = [];
  let pending: Message[] = [];
  // Items kept one after another go as one slice of the client's text, its separators included.
  let run: { first: number; last: number } | undefined;
  const itemsOf = wire.items(out);
  const flush = () => {
    if (run !== undefined) pieces.push(text.slice(at.items[run.first][0], at.items[run.last][1]));
    run = undefined;
    for (const item of pending.length > 0 ? itemsOf(pending) : []) pieces.push(stringifyWithRawNumbers(item));
    pending = [];
  };
  for (let i = 0; i < out.length;) {
    const g = groupOf(out[i], wire.format);
    const own = g === undefined ? undefined : byGroup[g];
    if (own !== undefined && own.messages.every((m, k) => out[i + k] === m)) {
      if (run !== undefined && pending.length === 0 && own.first === run.last + 1) run.last = own.last;
      else {
        flush();
        run = { first: own.first, last: own.last };
      }
      i += own.messages.length;
    } else {
      if (run !== undefined) flush();
      pending.push(out[i++]);
    }
  }
  flush();
  // The client's own spacing: before the first item, between items, after the last.
  const { items } = at;
  const first = items.length > 0 ? text.slice(at.open + 1, items[0][0]) : '';
  const between = items.length > 1 ? text.slice(items[0][1], items[1][0]) : ',';
  const after = items.length > 0 ? text.slice(items[items.length - 1][1], at.close) : '';
  // Joined with +, not join(): a join copies every slice into a new flat string at once (slow
  // for a body with characters above U+00FF), + links them and the one copy is the encoding.
  let body = text.slice(0, at.open + 1) + first;
  pieces.forEach((piece, k) => {
    body += k === 0 ? piece : between + piece;
  });
  return body + after + text.slice(at.close);
}
