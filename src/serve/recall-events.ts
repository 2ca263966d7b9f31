import type { Json } from '../messages/message.js';
import { RECALL_TOOL_NAME } from '../projection/index.js';
import type { ProtocolName } from './protocols.js';

/**
 * What the proxy needs to know about the events of each wire's stream to answer the model's
 * recall calls inside a streamed answer: which event opens a recall call (from there on the
 * stream is held, as the turn may end in it), and how the events of the answer that comes after
 * the recall round go on in the client's stream, so the client reads one answer: a new message
 * start is dropped, block and item numbers follow the ones the client already has.
 */

export type Obj = Record<string, Json>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where the client's stream stands: what it has been sent so far. */
export interface StreamPlace {
  /** Blocks or output items the client had when the current answer began (its numbers start after them). */
  offset: number;
  /** Blocks or output items the client has now. */
  count: number;
  /** The last event sequence number the client got (Responses). */
  seq: number;
  /** Output items the client got whole (Responses: its final event lists them all). */
  items: Json[];
  /** The id of the answer the client's stream began with (Responses). */
  responseId?: string;
  /** Whether the client has got any event yet: until then an answer goes to it as it came. */
  begun: boolean;
}

export const newPlace = (): StreamPlace => ({ offset: 0, count: 0, seq: -1, items: [], begun: false });

/**
 * What an event says about the answer: 'recall' when it opens a recall call (hold from here),
 * 'other' when it brings text or another call (the client may read on), undefined when it says
 * nothing yet (a message start, thinking, an empty text block).
 */
export type Verdict = 'recall' | 'other' | undefined;

/** One wire's rules. */
export interface EventRules {
  verdict(e: Obj): Verdict;
  /** A later answer's event as it goes on in the client's stream; undefined drops it. */
  continued(e: Obj, at: StreamPlace): Obj | undefined;
  /** Notes what an event the client got adds to its stream. */
  passed(e: Obj, at: StreamPlace): void;
  /** Whether `passed` may note anything in an event of this text (absent: it may in any). */
  notes?(text: string): boolean;
  /**
   * An event that brings text and then opens a recall call, as what goes on now (the text) and
   * what is held (the rest); undefined when nothing in it comes before the call.
   */
  split?(e: Obj): [Obj, Obj] | undefined;
}

const said = (v: unknown) => typeof v === 'string' && v !== '';
const byName = (name: unknown): Verdict =>
  name === RECALL_TOOL_NAME ? 'recall' : said(name) ? 'other' : undefined;
const noteIndex = (at: StreamPlace, index: unknown) => {
  if (typeof index === 'number') at.count = Math.max(at.count, index + 1);
};

const anthropic: EventRules = {
  verdict(e) {
    if (e.type === 'content_block_start' && isObj(e.content_block)) {
      const block = e.content_block;
      if (block.type === 'tool_use') return byName(block.name) ?? 'other';
      // Thinking comes before the turn's text or call; an empty text block says nothing yet.
      if (block.type === 'thinking' || block.type === 'redacted_thinking') return undefined;
      if (block.type === 'text') return said(block.text) ? 'other' : undefined;
      return 'other';
    }
    if (e.type === 'content_block_delta' && isObj(e.delta)) return said(e.delta.text) ? 'other' : undefined;
    return undefined;
  },
  continued(e, at) {
    // The client's message began with the first answer; later ones add blocks to it.
    if (e.type === 'message_start') return undefined;
    return typeof e.index === 'number' ? { ...e, index: e.index + at.offset } : e;
  },
  passed(e, at) {
    if (e.type === 'content_block_start') noteIndex(at, e.index);
  },
  notes: (text) => text.includes('content_block_start'),
};

const chat: EventRules = {
  verdict(e) {
    const choice = Array.isArray(e.choices) && isObj(e.choices[0]) ? e.choices[0] : undefined;
    const delta = isObj(choice?.delta) ? choice.delta : undefined;
    if (delta === undefined) return undefined;
    const calls = Array.isArray(delta.tool_calls) ? delta.tool_calls : [];
    const names = calls.map((c) => byName(isObj(c) && isObj(c.function) ? c.function.name : undefined));
    if (names.includes('recall')) return 'recall';
    return said(delta.content) || said(delta.refusal) || names.includes('other') ? 'other' : undefined;
  },
  // Chunks carry no numbers of their own beyond a call's index, and the continued turn had no other call.
  continued: (e) => e,
  passed: () => undefined,
  notes: () => false,
};

const FINAL_RESPONSE = new Set(['response.completed', 'response.incomplete', 'response.failed']);

const responses: EventRules = {
  verdict(e) {
    if (e.type === 'response.output_text.delta' || e.type === 'response.refusal.delta')
      return said(e.delta) ? 'other' : undefined;
    if (e.type !== 'response.output_item.added' || !isObj(e.item)) return undefined;
    const { item } = e;
    if (item.type === 'function_call') return byName(item.name) ?? 'other';
    // A message may open empty before its text; reasoning comes before the turn's text or call.
    if (item.type === 'message' || item.type === 'reasoning') return undefined;
    return 'other';
  },
  continued(e, at) {
    if (e.type === 'response.created' || e.type === 'response.in_progress') return undefined;
    const out: Obj = { ...e };
    if (typeof e.output_index === 'number') out.output_index = e.output_index + at.offset;
    if (typeof e.sequence_number === 'number') out.sequence_number = at.seq + 1;
    if (FINAL_RESPONSE.has(String(e.type)) && isObj(e.response)) {
      const own = Array.isArray(e.response.output) ? e.response.output : [];
      // The final event lists the whole answer the client read: the items it got before too.
      out.response = {
        ...e.response,
        ...(at.responseId !== undefined ? { id: at.responseId } : {}),
        output: [...at.items.slice(0, at.offset), ...own],
      };
    }
    return out;
  },
  passed(e, at) {
    if (typeof e.sequence_number === 'number') at.seq = e.sequence_number;
    if (e.type === 'response.created' && isObj(e.response) && typeof e.response.id === 'string')
      at.responseId = e.response.id;
    if (e.type === 'response.output_item.added') noteIndex(at, e.output_index);
    if (e.type === 'response.output_item.done' && e.item !== undefined) at.items.push(e.item);
  },
};

/** The parts of a Gemini chunk's first candidate. */
export function geminiParts(e: Obj): Json[] {
  const candidate = Array.isArray(e.candidates) && isObj(e.candidates[0]) ? e.candidates[0] : undefined;
  const content = isObj(candidate?.content) ? candidate.content : undefined;
  return Array.isArray(content?.parts) ? content.parts : [];
}

const gemini: EventRules = {
  verdict(e) {
    const says = geminiParts(e).map((p): Verdict => {
      if (!isObj(p)) return undefined;
      if (isObj(p.functionCall)) return byName(p.functionCall.name) ?? 'other';
      // A thought comes before the turn's text or call.
      return p.thought !== true && said(p.text) ? 'other' : undefined;
    });
    return says.includes('recall') ? 'recall' : says.includes('other') ? 'other' : undefined;
  },
  // Each chunk stands alone: a later answer's chunks go on as they come.
  continued: (e) => e,
  passed: () => undefined,
  notes: () => false,
  split(e) {
    const parts = geminiParts(e);
    const k = parts.findIndex(
      (p) => isObj(p) && isObj(p.functionCall) && byName(p.functionCall.name) === 'recall',
    );
    if (k <= 0) return undefined;
    const candidate = (e.candidates as Obj[])[0];
    const content = candidate.content as Obj;
    const withParts = (some: Json[], whole: boolean): Obj => {
      const c: Obj = { ...candidate, content: { ...content, parts: some } };
      // The end of the turn (its finish reason, its usage) stays with what is held.
      if (!whole) delete c.finishReason;
      const out: Obj = { ...e, candidates: [c, ...(e.candidates as Json[]).slice(1)] };
      if (!whole) delete out.usageMetadata;
      return out;
    };
    return [withParts(parts.slice(0, k), false), withParts(parts.slice(k), true)];
  },
};

export const EVENT_RULES: Record<ProtocolName, EventRules> = {
  anthropic,
  'openai-chat': chat,
  'openai-responses': responses,
  gemini,
};
