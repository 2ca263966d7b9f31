import type { Json } from '../messages/message.js';
import { RECALL_TOOL_NAME } from '../projection/index.js';
import type { ProtocolName } from './protocols.js';
import { frameData } from './recall-stream.js';

/**
 * Tells early, from the first events of a streamed answer, whether it can be a recall turn:
 * text or a call of another tool first means it is not, so the stream can go on to the client
 * as it comes; a recall call first means it must be held to the end.
 */

type Obj = Record<string, Json>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const said = (v: unknown) => typeof v === 'string' && v !== '';

/** What the events so far say: 'recall' (hold), 'other' (pass on), or undefined (not yet known). */
export type StreamVerdict = 'recall' | 'other' | undefined;

const byName = (name: unknown): StreamVerdict =>
  name === RECALL_TOOL_NAME ? 'recall' : said(name) ? 'other' : undefined;

function chatVerdict(e: Obj): StreamVerdict {
  const choice = Array.isArray(e.choices) && isObj(e.choices[0]) ? e.choices[0] : undefined;
  const delta = isObj(choice?.delta) ? choice.delta : undefined;
  if (delta === undefined) return undefined;
  if (said(delta.content) || said(delta.refusal)) return 'other';
  const first = Array.isArray(delta.tool_calls) ? delta.tool_calls[0] : undefined;
  return isObj(first) && isObj(first.function) ? byName(first.function.name) : undefined;
}

function anthropicVerdict(e: Obj): StreamVerdict {
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
}

function responsesVerdict(e: Obj): StreamVerdict {
  if (e.type === 'response.output_text.delta' || e.type === 'response.refusal.delta')
    return said(e.delta) ? 'other' : undefined;
  if (e.type !== 'response.output_item.added' || !isObj(e.item)) return undefined;
  const { item } = e;
  if (item.type === 'function_call') return byName(item.name) ?? 'other';
  // A message may open empty before its text; reasoning comes before the turn's text or call.
  if (item.type === 'message' || item.type === 'reasoning') return undefined;
  return 'other';
}

const VERDICTS: Partial<Record<ProtocolName, (e: Obj) => StreamVerdict>> = {
  'openai-chat': chatVerdict,
  anthropic: anthropicVerdict,
  'openai-responses': responsesVerdict,
};

/** Reads a stream's text as it comes, one whole event at a time, until the verdict is known. */
export class StreamPeek {
  private rest = '';
  private readonly decoder = new TextDecoder();
  private readonly verdictOf: ((e: Obj) => StreamVerdict) | undefined;
  verdict: StreamVerdict;

  constructor(protocol: ProtocolName) {
    this.verdictOf = VERDICTS[protocol];
  }

  /** Takes the next chunk of the stream; returns the verdict so far. */
  push(chunk: Uint8Array): StreamVerdict {
    if (this.verdict !== undefined || this.verdictOf === undefined) return this.verdict;
    const frames = (this.rest + this.decoder.decode(chunk, { stream: true })).split(/\r?\n\r?\n/);
    this.rest = frames.pop() ?? '';
    for (const frame of frames) {
      let event: unknown;
      try {
        event = JSON.parse(frameData(frame));
      } catch {
        continue; // not JSON ([DONE], comments): says nothing
      }
      this.verdict = isObj(event) ? this.verdictOf(event) : undefined;
      if (this.verdict !== undefined) break;
    }
    return this.verdict;
  }
}
