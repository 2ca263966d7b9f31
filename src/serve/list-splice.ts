import { exportGeminiContents } from '../formats/gemini.js';
import { exportOpenAIChatItems } from '../formats/openai-chat.js';
import { stringifyWithRawNumbers } from '../formats/raw-numbers.js';
import { groupOf, type RoundTripFormat } from '../formats/round-trip.js';
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
  items(messages: readonly Message[]): Json[];
}

const WIRES: Partial<Record<ProtocolName, ListWire>> = {
  gemini: {
    key: 'contents',
    format: 'gemini',
    list: (_fixed, conversation) => conversation,
    items: exportGeminiContents,
  },
  // A Chat Completions request's system messages are items of its list like the others.
  'openai-chat': {
    key: 'messages',
    format: 'openai-chat',
    list: (fixed, conversation) => [...fixed, ...conversation],
    items: exportOpenAIChatItems,
  },
};

/** The client's messages of each item of its list, by item index; undefined when they do not map one to one. */
function itemsOf(wire: ListWire, sent: readonly Message[], count: number): Message[][] | undefined {
  const byItem: Message[][] = [];
  let last = -1;
  for (const m of sent) {
    const g = groupOf(m, wire.format);
    // Items come in order, each one's messages together.
    if (g === undefined || g >= count || g < last || (g > last && byItem[g] !== undefined)) return undefined;
    (byItem[g] ??= []).push(m);
    last = g;
  }
  for (let g = 0; g < count; g++) if (byItem[g] === undefined) return undefined;
  return byItem;
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
  const byItem = itemsOf(wire, wire.list(req.prefix, req.messages), at.items.length);
  if (byItem === undefined) return undefined;
  const out = wire.list(req.prefix, projected);
  const pieces: string[] = [];
  let pending: Message[] = [];
  const flush = () => {
    for (const item of pending.length > 0 ? wire.items(pending) : [])
      pieces.push(stringifyWithRawNumbers(item));
    pending = [];
  };
  for (let i = 0; i < out.length;) {
    const g = groupOf(out[i], wire.format);
    const own = g === undefined ? undefined : byItem[g];
    if (own !== undefined && own.every((m, k) => out[i + k] === m)) {
      flush();
      const [start, end] = at.items[g!];
      pieces.push(text.slice(start, end));
      i += own.length;
    } else pending.push(out[i++]);
  }
  flush();
  // The client's own spacing: before the first item, between items, after the last.
  const { items } = at;
  const first = items.length > 0 ? text.slice(at.open + 1, items[0][0]) : '';
  const between = items.length > 1 ? text.slice(items[0][1], items[1][0]) : ',';
  const after = items.length > 0 ? text.slice(items[items.length - 1][1], at.close) : '';
  return `${text.slice(0, at.open + 1)}${first}${pieces.join(between)}${after}${text.slice(at.close)}`;
}
