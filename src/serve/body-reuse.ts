import { isUtf8 } from 'node:buffer';
import { importAnthropic } from '../formats/anthropic.js';
import { JsonDocument } from '../formats/json-text.js';
import { importOpenAIChat } from '../formats/openai-chat.js';
import { rememberRawNumbers } from '../formats/raw-numbers.js';
import { importGeminiTail } from '../formats/gemini.js';
import { importResponsesTail } from '../formats/openai-responses.js';
import { groupOf, itemsOf, type RoundTrip } from '../formats/round-trip.js';
import { hashOf } from '../adapters/shared/sync-point.js';
import type { Json, Message } from '../messages/message.js';
import { LISTS, markedChain, MARKS, type ChainMark, type RequestChain } from './hash-chain.js';
import { arrayItemsFrom, filledArrayClose, isSpace, topLevelKeyCount } from './json-splice.js';
import { parseRequest, type ParsedRequest, type ProtocolName } from './protocols.js';
import { checkJsonDepth, MAX_JSON_DEPTH } from './request-guards.js';
import { SLICED_BODY_BYTES } from './sliced-parse.js';
import { charCodeIn, joinedText, piecesBetween, withPiece, type TextPieces } from './text-pieces.js';

/**
 * An agent resends its whole history with every request, a few messages added at the end of its
 * list. The proxy keeps each session's last body, and a body that begins with the same bytes up to
 * the end of one of its last messages is read from there on only: what comes after is decoded,
 * parsed, imported and hashed; the rest is taken from the kept body (its text, messages and the
 * hash chain's running state), which the full read of the same bytes gives too. Anything else
 * (another list, changed fields after the list, a body not valid UTF-8) is read whole. Where the
 * kept bodies lack room, the least recent ones keep their bytes without their text (two bytes a
 * character as soon as one is beyond Latin-1), and the next body's start is decoded from its own
 * bytes (the same up to the cut) instead.
 */

/** A body read, and what a later body that resends the same bytes can take from it. */
export interface ReadBody {
  text: string;
  /** The text in the pieces it was read in (see text-pieces.ts). */
  pieces: TextPieces;
  parsed: ParsedRequest;
  chain: RequestChain;
  /** What the next body can start from; absent when it must be read whole. */
  reusable?: Reusable;
}

/** A kept body: its bytes (and text), what was read from them, and where a later one may go on from. */
interface Reusable {
  protocol: ProtocolName;
  path: string;
  bytes: Buffer;
  /** Its text in the pieces it was read in, until the kept bodies need the room. */
  pieces?: TextPieces;
  parsed: ParsedRequest;
  chain: RequestChain;
  items: ReadonlyArray<readonly [number, number]>;
  /** Where the list closes (its `]`), and the text from there on (a string of its own, not a slice that would hold the whole text). */
  close: number;
  suffix: string;
  /** Where the top-level tools list closes (-1: no tools), once asked. */
  tools?: number;
  /** Ends of the last groups (latest last), each with where its bytes end. */
  cuts: Cut[];
}

interface Cut {
  mark: ChainMark;
  /** The text and byte offsets just past the mark's last item. */
  char: number;
  byte: number;
}

const WHERE = 'request body';

/**
 * The messages a protocol's list items after a cut import as, counted from the items' own start
 * (`first` items and the messages `before` came before them); undefined when the whole list's
 * import would not read them as a list of their own (a turn that goes on across the cut).
 */
type TailImport = (values: unknown[], first: number, before: readonly Message[]) => Message[] | undefined;

const TAIL_IMPORTS: Record<ProtocolName, TailImport> = {
  // One group per item, each read on its own.
  'openai-chat': (values) =>
    importOpenAIChat(new JsonDocument({ messages: values }), WHERE).sessions[0]!.messages,
  anthropic: (values) => importAnthropic(new JsonDocument({ messages: values }), WHERE).sessions[0]!.messages,
  'openai-responses': (values, _first, before) => importResponsesTail(values, before, WHERE),
  gemini: (values, first, before) => importGeminiTail(values, WHERE, first, before),
};

/** How many bytes a text's characters take in UTF-8 (an ASCII body's are its characters). */
const utf8Length = (text: string, ascii: boolean) => (ascii ? text.length : Buffer.byteLength(text));

/**
 * What a fully read body leaves for its session's next one, or undefined when its list cannot be
 * gone on from (read from messages, not valid UTF-8, the list's key twice, no message kept before a mark).
 */
export function reusableOf(
  protocol: ProtocolName,
  path: string,
  bytes: Buffer,
  text: string,
  parsed: ParsedRequest,
): ReadBody {
  const { chain, marks, items } = markedChain(text, parsed, bytes);
  const { key } = LISTS[protocol];
  const pieces = [text];
  const whole = { text, pieces, parsed, chain };
  if (marks === undefined || items === undefined || !isUtf8(bytes)) return whole;
  if (topLevelKeyCount(text, key) !== 1) return whole;
  const close = arrayCloseAfter(text, items);
  if (close === undefined) return whole;
  const start = { item: 0, char: 0, byte: 0 };
  const cuts = cutsFrom(marks, items, start, (a, b) => text.slice(a, b), bytes.length === text.length);
  if (cuts.length === 0) return whole;
  const suffix = endOf(bytes, text.slice(close), bytes.length === text.length);
  return { ...whole, reusable: { protocol, path, bytes, pieces, parsed, chain, items, close, suffix, cuts } };
}

/** A copy of the text `end` that ends `bytes`, decoded from them: a slice of the body's text would hold all of it. */
const endOf = (bytes: Buffer, end: string, ascii: boolean) =>
  bytes.toString('utf8', bytes.length - utf8Length(end, ascii));

/** The cuts at the marks after `from` (a cut whose offsets are known), each with its offsets. */
function cutsFrom(
  marks: readonly ChainMark[],
  items: ReadonlyArray<readonly [number, number]>,
  from: { item: number; char: number; byte: number },
  slice: (start: number, end: number) => string,
  ascii: boolean,
): Cut[] {
  const cuts: Cut[] = [];
  let { char, byte } = from;
  for (const mark of marks) {
    // A cut keeps at least one message: the leading system messages are then the same.
    if (mark.item <= from.item || mark.message === 0) continue;
    const end = items[mark.item - 1]![1];
    byte += utf8Length(slice(char, end), ascii);
    char = end;
    cuts.push({ mark, char, byte });
  }
  return cuts;
}

/** A list's items from the text between its brackets, or undefined when they are not JSON (or nest too deep). */
function parsedItems(inside: string): unknown[] | undefined {
  const listText = `[${inside}]`;
  try {
    // The list's items sit two levels down in the body.
    checkJsonDepth(listText, MAX_JSON_DEPTH - 1);
    const values = JSON.parse(listText) as unknown[];
    rememberRawNumbers(listText, values);
    return values;
  } catch {
    return undefined; // read whole, which reports what is wrong
  }
}

/** Where the list whose items these are closes: the `]` after its last item. */
function arrayCloseAfter(text: string, items: ReadonlyArray<readonly [number, number]>): number | undefined {
  const lastEnd = items[items.length - 1]?.[1];
  if (lastEnd === undefined) return undefined;
  let i = lastEnd;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return text[i] === ']' ? i : undefined;
}

/**
 * The body read from where `kept` leaves off: undefined when it does not begin with the kept
 * bytes up to one of its cuts, or what follows is not a list's rest and the kept body's end.
 */
function readOnFrom(
  kept: Reusable,
  protocol: ProtocolName,
  path: string,
  bytes: Buffer,
): ReadBody | undefined {
  if (kept.protocol !== protocol || kept.path !== path) return undefined;
  for (let c = kept.cuts.length - 1; c >= 0; c--) {
    const cut = kept.cuts[c]!;
    if (bytes.length <= cut.byte || bytes.compare(kept.bytes, 0, cut.byte, 0, cut.byte) !== 0) continue;
    // A large new part is read whole, a slice at a time, as any large body (see sliced-parse.ts).
    if (bytes.length - cut.byte >= SLICED_BODY_BYTES) return undefined;
    // A turn that goes on across this cut is read from an earlier one.
    const read = readTail(kept, cut, bytes);
    if (read !== undefined) return read;
  }
  return undefined;
}

function readTail(kept: Reusable, cut: Cut, bytes: Buffer): ReadBody | undefined {
  if (!isUtf8(bytes)) return undefined;
  // Only the new part's text is read: the body's whole text is made of the kept one's and it,
  // held in pieces (slicing the joined text would copy it whole).
  const tail = bytes.toString('utf8', cut.byte);
  const start = kept.pieces ? piecesBetween(kept.pieces, 0, cut.char) : [bytes.toString('utf8', 0, cut.byte)];
  const pieces = withPiece(start, tail);
  const text = joinedText(pieces);
  const inTail = arrayItemsFrom(tail, 0, false);
  if (inTail === undefined) return undefined;
  // The fields after the list as the kept body had them: the request's settings and envelope are
  // its; else they are read anew (Codex writes a member's keys in another order each time).
  const suffix = tail.slice(inTail.close);
  const fields = suffix === kept.suffix ? kept.parsed : fieldsWith(kept, pieces, suffix);
  if (fields === undefined) return undefined;
  const at = cut.char;
  const newItems = inTail.items.map(([start, end]): [number, number] => [start + at, end + at]);
  const values = parsedItems(tail.slice(inTail.items[0]?.[0] ?? inTail.close, inTail.close));
  if (values?.length !== newItems.length) return undefined;
  const before = kept.parsed.messages.slice(0, cut.mark.message);
  let added: Message[] | undefined;
  try {
    added = values.length === 0 ? [] : TAIL_IMPORTS[kept.protocol](values, cut.mark.item, before);
  } catch {
    return undefined;
  }
  if (added === undefined) return undefined;
  const { format } = LISTS[kept.protocol];
  // A cut keeps a message: its group is the last one before the new items.
  const place = { items: cut.mark.item, groups: groupOf(before[before.length - 1]!, format)! + 1 };
  const messages = [...before, ...added.map((m) => placed(m, place, before))];
  const parsed: ParsedRequest = { ...fields, messages };
  const items = [...kept.items.slice(0, cut.mark.item), ...newItems];
  const from = { links: kept.chain.links.slice(0, cut.mark.message), mark: cut.mark };
  const slice = (start: number, end: number) =>
    start >= at ? tail.slice(start - at, end - at) : joinedText(piecesBetween(pieces, start, end));
  const read = markedChain(text, parsed, bytes, { items, from, slice }, kept.chain.fixed);
  if (read.marks === undefined) return undefined;
  const ascii = bytes.length === text.length;
  const cuts = [
    ...kept.cuts.filter((k) => k.mark.item <= cut.mark.item),
    ...cutsFrom(read.marks, items, { item: cut.mark.item, ...cut }, slice, ascii),
  ];
  const reusable: Reusable = {
    ...kept,
    bytes,
    pieces,
    parsed,
    chain: read.chain,
    items,
    close: inTail.close + at,
    suffix: suffix === kept.suffix ? kept.suffix : endOf(bytes, suffix, ascii),
    // The tools list is before the list, or after it where the same bytes moved with its end (else found again).
    tools:
      kept.tools === undefined || kept.tools < kept.close
        ? kept.tools
        : suffix === kept.suffix
          ? kept.tools - kept.close + inTail.close + at
          : undefined,
    cuts: cuts.slice(-MARKS),
  };
  return { text, pieces, parsed, chain: read.chain, reusable };
}

/**
 * The request read from the kept body's fields before its list, its list's items before the
 * conversation (the leading system messages) and `suffix` after the list: what a whole read
 * gives but the conversation. `pieces` are the new body's text, the same as the kept one's
 * before the cut (where the conversation's first message has ended). Undefined when those are
 * not a valid request, or their fixed part differs from the kept body's (its hash chain starts from that).
 */
function fieldsWith(kept: Reusable, pieces: TextPieces, suffix: string): ParsedRequest | undefined {
  const first = itemsOf(kept.parsed.messages[0]!, LISTS[kept.protocol].format)?.[0];
  if (first === undefined) return undefined;
  let head = first > 0 ? kept.items[first - 1]![1] : kept.items[0]![0];
  // Without leading items, the text up to the list's `[`.
  if (first === 0) while (head > 0 && isSpace(charCodeIn(pieces, head - 1))) head--;
  const text = joinedText([...piecesBetween(pieces, 0, head), suffix]);
  try {
    checkJsonDepth(text);
    const fields = parseRequest(kept.protocol, text, false, kept.path);
    return hashOf(fields.prefix) === kept.chain.fixed && fields.messages.length === 0 ? fields : undefined;
  } catch {
    return undefined; // read whole, which reports what is wrong
  }
}

/** Where a read body's top-level tools list closes (-1: no tools): found once a session, then moved with the list. */
export function toolsCloseOf(read: Pick<ReadBody, 'text' | 'reusable'>): number {
  const kept = read.reusable;
  if (kept === undefined) return filledArrayClose(read.text, 'tools');
  kept.tools ??= filledArrayClose(read.text, 'tools');
  return kept.tools;
}

/**
 * A message imported from the tail as the whole list's import gives it: its group and first item
 * counted from the list's start (the item named only where it is not the group's number, in the
 * marker's key order), and a tool result named after the latest earlier call with its id.
 */
function placed(m: Message, before: { items: number; groups: number }, earlier: readonly Message[]): Message {
  const meta = m.metadata;
  const rt = meta?.roundTrip as RoundTrip | undefined;
  if (meta !== undefined && rt !== undefined) {
    const { format, group, at, ...rest } = rt;
    const item = (at ?? group) + before.items;
    const moved = group + before.groups;
    meta.roundTrip = {
      format,
      group: moved,
      ...(item !== moved ? { at: item } : {}),
      ...rest,
    } as unknown as Json;
  }
  if (m.role !== 'tool' || m.toolName !== undefined || m.toolCallId === undefined) return m;
  for (let i = earlier.length - 1; i >= 0; i--)
    for (const call of earlier[i]!.toolCalls ?? [])
      if (call.id === m.toolCallId) return { ...m, toolName: call.name };
  return m;
}

/** What the kept bodies may hold together by default: those of the sessions that sent last. */
export const KEPT_BODIES_BYTES = 40 * 1024 * 1024;

/**
 * What a kept body is counted at: its bytes and what was read from them (their messages' texts,
 * at two bytes a character as soon as one is beyond Latin-1, and the objects around them) at
 * three bytes a byte, and its text, while kept, at two bytes a character.
 */
const sizeOf = (body: Reusable) => 3 * body.bytes.length + 2 * textLength(body);
const textLength = (body: Reusable) => body.pieces?.reduce((n, piece) => n + piece.length, 0) ?? 0;

/**
 * When a session counts as quiet, its kept body giving way to another's: once the proxy has
 * had more than twice as many requests since the session's last one as between its last two
 * (counted in requests, not time: on a loaded machine the time between two requests varies
 * several times over, and every session's with it), or after a minute. Sessions that take turns
 * beyond the budget (50 agents of 200k tokens at once) would each drop the body the next one
 * needs: the bodies kept stay while their sessions go on, and a body of a session that stopped
 * gives way after two rounds of the others.
 */
const QUIET_MS = 60_000;
const QUIET_TURNS = 2;

/** A kept body: when it was kept (ms, and the proxy's request count), and the requests between its session's last two. */
interface Kept {
  body: Reusable;
  at: number;
  seq: number;
  gap?: number;
}

const quiet = (k: Kept, now: number, seq: number) =>
  now - k.at >= QUIET_MS || (k.gap !== undefined && seq - k.seq > QUIET_TURNS * k.gap);

/**
 * The kept bodies of sessions, in the order of their bytes: the one that shares the longest
 * start with a new body is next to where that body would go, found by halving. They hold at
 * most `budget` bytes together: beyond it, the bodies of quiet sessions are dropped, those that
 * sent least recently first (their next request is read whole), so idle sessions hold only
 * their history; when that does not make room, the new body is not kept. `clock` gives the
 * time in ms.
 */
export class KeptBodies {
  private sorted: Reusable[] = [];
  /** By session, the least recently kept first. */
  private byId = new Map<string, Kept>();
  private held = 0;
  /** Bodies offered to keep so far: the requests read. */
  private seq = 0;

  constructor(
    private readonly budget = KEPT_BODIES_BYTES,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The body read from a kept one it continues, or undefined (read it whole). */
  read(protocol: ProtocolName, path: string, bytes: Buffer): ReadBody | undefined {
    const at = this.placeOf(bytes);
    for (const near of [this.sorted[at - 1], this.sorted[at]]) {
      if (near === undefined) continue;
      const read = readOnFrom(near, protocol, path, bytes);
      if (read !== undefined) return read;
    }
    return undefined;
  }

  /** Tells whether a body of `protocol` to `path` that starts with given bytes may resend a kept one (read whole, it can tell). */
  startsAsKept(protocol: ProtocolName, path: string): (start: Buffer) => boolean {
    return (start) => {
      const at = this.placeOf(start);
      return [this.sorted[at - 1], this.sorted[at]].some(
        (near) =>
          near !== undefined &&
          near.protocol === protocol &&
          near.path === path &&
          near.bytes.length >= start.length &&
          near.bytes.compare(start, 0, start.length, 0, start.length) === 0,
      );
    };
  }

  /**
   * Keeps a session's last body (replacing the one it kept before), dropping the least recent
   * ones of quiet sessions beyond the budget; when that does not make room, the body is not kept.
   */
  keep(id: string, body: Reusable | undefined): void {
    const now = this.clock();
    const seq = ++this.seq;
    const last = this.byId.get(id)?.seq;
    this.forget(id);
    if (body === undefined) return;
    const room = () => this.held + sizeOf(body) <= this.budget;
    // The least recent body first gives up its text, and goes too when that leaves too little
    // room and its session is quiet; the new body gives up its own text when that is not enough.
    for (const [old, kept] of this.byId) {
      if (room()) break;
      this.held -= 2 * textLength(kept.body);
      delete kept.body.pieces;
      if (!room() && quiet(kept, now, seq)) this.forget(old);
    }
    if (!room()) delete body.pieces;
    if (!room()) return;
    this.byId.set(id, { body, at: now, seq, ...(last !== undefined ? { gap: seq - last } : {}) });
    this.held += sizeOf(body);
    this.sorted.splice(this.placeOf(body.bytes), 0, body);
  }

  /** Drops a session's kept body. */
  forget(id: string): void {
    const old = this.byId.get(id)?.body;
    if (old === undefined) return;
    this.byId.delete(id);
    this.held -= sizeOf(old);
    const i = this.sorted.indexOf(old);
    if (i >= 0) this.sorted.splice(i, 1);
  }

  private placeOf(bytes: Buffer): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sorted[mid]!.bytes.compare(bytes) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
