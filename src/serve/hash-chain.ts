import { createHash, type Hash } from 'node:crypto';
import { itemsOf, type RoundTripFormat } from '../formats/round-trip.js';
import type { Message } from '../messages/message.js';
import { hashOf, messageHash, shortDigest } from '../adapters/shared/sync-point.js';
import { isSpace, stringEnd, topLevelArrayAt, type ArrayAt } from './json-splice.js';
import type { ParsedRequest, ProtocolName } from './protocols.js';

/**
 * One rolling hash chain per request: for each message of the conversation, a hash of the
 * bytes the client sent it and every message before it in (one running hash). Equal
 * values at position i mean the first i messages (and the fixed part) are unchanged byte for
 * byte, so one comparison tells a continuation from a request that edited an old message, and
 * the session index finds a session by looking its head up, with no scan.
 *
 * Every message's bytes are hashed on every request: that is far cheaper than parsing them
 * (which the request pays anyway) and the only way an edit anywhere in the history is noticed.
 * Canonical hashing (serialize then hash) is kept for what the bytes cannot give.
 */

/** Where each protocol keeps its message list, and the round-trip format its items are grouped by. */
export const LISTS: Record<ProtocolName, { key: string; format: RoundTripFormat }> = {
  anthropic: { key: 'messages', format: 'anthropic' },
  'openai-chat': { key: 'messages', format: 'openai-chat' },
  'openai-responses': { key: 'input', format: 'openai-responses' },
  gemini: { key: 'contents', format: 'gemini' },
};

/** Keys a client sets per request, not per message (where the cache breakpoint sits this time). */
const MARKER = '"cache_control"';

/** Index just past the JSON value starting at `i`, or -1. */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) {
      j = stringEnd(text, j) - 1;
      if (j < 0) return -1;
      if (depth === 0) return j + 1;
    } else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) {
      if (--depth === 0) return j + 1;
      if (depth < 0) return j;
    } else if (depth === 0 && (c === 0x2c || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) return j;
  }
  return depth === 0 ? text.length : -1;
}

/**
 * An item's text without its per-request markers (each `"cache_control": …` member and the
 * comma that joined it), so a message whose breakpoint moved hashes as it did before. Only a
 * key (after `{` or `,`, before `:`) is a member: inside a JSON string a quote is escaped.
 */
export function withoutMarkers(text: string): string {
  let at = text.indexOf(MARKER);
  if (at < 0) return text;
  let out = '';
  let from = 0;
  while (at >= 0) {
    let before = at - 1;
    while (before >= 0 && isSpace(text.charCodeAt(before))) before--;
    let colon = at + MARKER.length;
    while (colon < text.length && isSpace(text.charCodeAt(colon))) colon++;
    const opener = text.charCodeAt(before);
    if ((opener === 0x7b || opener === 0x2c) && text.charCodeAt(colon) === 0x3a) {
      let start = colon + 1;
      while (start < text.length && isSpace(text.charCodeAt(start))) start++;
      const end = valueEnd(text, start);
      if (end < 0) return text;
      let next = end;
      while (next < text.length && isSpace(text.charCodeAt(next))) next++;
      // `,"cache_control":{…}` goes with its leading comma; a first member with the one after it.
      if (opener === 0x2c) out += text.slice(from, before);
      else {
        out += text.slice(from, before + 1);
        if (text.charCodeAt(next) === 0x2c) next++;
      }
      from = next;
      at = text.indexOf(MARKER, next);
    } else at = text.indexOf(MARKER, at + 1);
  }
  return out + text.slice(from);
}

/**
 * Where a request's chain can go on from for a later request that resends the same bytes up to
 * there: after `item` list items (and the `message` messages they gave), the running hash then.
 */
export interface ChainMark {
  item: number;
  message: number;
  running: Hash;
}

/** How many of the last group ends of a request are kept as marks (an agent moves its cache marker back one or two). */
export const MARKS = 4;

/** The list items of a request's body, and what its chain's links start from when part of them were hashed before. */
export interface ByteList {
  items: ReadonlyArray<readonly [number, number]>;
  /** The links of the messages before `mark.message`, and the mark they end at. */
  from?: { links: readonly string[]; mark: ChainMark };
  /** The text between two offsets of the body's (when the caller holds it in parts). */
  slice?: (start: number, end: number) => string;
}

/**
 * The links of a conversation from the bytes of the list items its messages came from: one hash
 * runs over the fixed part's hash and then every item in order, and each message's link is that
 * hash so far at the end of its group's items (with its place in the group when one group gave
 * several messages; one group may hold several items, as a Responses turn does).
 * Undefined when the list cannot be matched item for item to the messages. With marks, the last
 * few group ends are kept (see {@link ChainMark}).
 */
function byteLinks(
  text: string,
  parsed: ParsedRequest,
  seed: string,
  bytes: Buffer | undefined,
  list: ByteList,
  marks?: ChainMark[],
): string[] | undefined {
  const { format } = LISTS[parsed.protocol];
  const { items, from } = list;
  if (parsed.messages.length === 0) return undefined;
  const ranges = parsed.messages.map((m) => itemsOf(m, format));
  // The conversation must end the list, its items in order: anything else is not read from bytes.
  if (ranges[ranges.length - 1]?.[1] !== items.length - 1) return undefined;
  // An ASCII body's characters are its bytes: they are hashed as they came, without encoding them again.
  const ascii = bytes !== undefined && bytes.length === text.length ? bytes : undefined;
  const slice = list.slice ?? ((start: number, end: number) => text.slice(start, end));
  const itemBytes = ([start, end]: readonly [number, number]): string | Buffer => {
    const own = slice(start, end);
    if (own.includes(MARKER)) return withoutMarkers(own);
    return ascii === undefined ? own : ascii.subarray(start, end);
  };
  const running = from?.mark.running.copy() ?? createHash('sha256').update(seed);
  const links: string[] = from?.links.slice() ?? [];
  // Messages that start a group among the last few: a mark is taken before each (and at the end).
  const starts: number[] = [];
  if (marks !== undefined)
    for (let i = ranges.length - 1; i > 0 && starts.length < MARKS - 1; i--)
      if (ranges[i]?.[0] !== ranges[i - 1]?.[0]) starts.push(i);
  // The last item hashed, and the first item of the last message's group.
  let last = from === undefined ? -1 : from.mark.item - 1;
  let group = -1;
  let within = 0;
  let link = '';
  for (let i = from?.mark.message ?? 0; i < ranges.length; i++) {
    const r = ranges[i];
    if (r === undefined) return undefined;
    const [first, end] = r;
    if (first === group) {
      links.push(`${link}.${++within}`);
      continue;
    }
    if (first <= last) return undefined;
    if (starts.includes(i)) marks!.push({ item: last + 1, message: i, running: running.copy() });
    // Items no message came from (just before this group) are hashed too: an edit there is seen.
    for (let k = last + 1; k <= end; k++) running.update(itemBytes(items[k]!)).update('\0');
    last = end;
    group = first;
    within = 0;
    link = shortDigest(running.copy().digest());
    links.push(link);
  }
  marks?.push({ item: last + 1, message: ranges.length, running });
  return links;
}

/** The links of a conversation from its messages (serialized and hashed), where the bytes cannot give them. */
function messageLinks(messages: readonly Message[], seed: string): string[] {
  const running = createHash('sha256').update(seed);
  return messages.map((m) => shortDigest(running.update(messageHash(m)).copy().digest()));
}

/** A request's chain: its fixed part's hash, then one chained value per conversation message. */
export interface RequestChain {
  /** Hash of the fixed part (the leading system messages). */
  fixed: string;
  /** `links[i]` covers the fixed part and messages 0..i. */
  links: string[];
}

/**
 * The chain of a parsed request, from its text's bytes where they map to its messages (else from
 * its messages); `bytes` is the body the text was decoded from, when the caller still has it.
 */
export function requestChain(text: string, parsed: ParsedRequest, bytes?: Buffer): RequestChain {
  return markedChain(text, parsed, bytes).chain;
}

/** The list under a protocol's key in a body's text, item by item (none for a Gemini body sent whole). */
function listOf(text: string, parsed: ParsedRequest): ArrayAt | undefined {
  if (parsed.meta.geminiOuter !== undefined) return undefined;
  return topLevelArrayAt(text, LISTS[parsed.protocol].key);
}

/**
 * A request's chain as {@link requestChain} makes it, and, when it was read from bytes, the marks
 * a later request resending the same bytes goes on from (latest last) and the list it read.
 * `list` gives the list already found, and the chain of the part read before.
 */
export function markedChain(
  text: string,
  parsed: ParsedRequest,
  bytes?: Buffer,
  list?: ByteList,
  fixedHash?: string,
): { chain: RequestChain; marks?: ChainMark[]; items?: ByteList['items'] } {
  const fixed = fixedHash ?? hashOf(parsed.prefix);
  const items = list?.items ?? listOf(text, parsed)?.items;
  const marks: ChainMark[] = [];
  // The two kinds never agree: a request read the other way starts over rather than match wrongly.
  const links =
    items === undefined
      ? undefined
      : byteLinks(text, parsed, `bytes:${fixed}`, bytes, { ...list, items }, marks);
  if (links === undefined)
    return { chain: { fixed, links: messageLinks(parsed.messages, `messages:${fixed}`) } };
  return { chain: { fixed, links }, marks, items: items! };
}
