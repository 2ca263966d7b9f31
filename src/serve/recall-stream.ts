import type { Json } from '../messages/message.js';
import type { ProtocolName } from './protocols.js';
import { geminiParts, isObj, type Obj } from './recall-events.js';

/**
 * A streamed answer (server-sent events) read back into the JSON answer the same request
 * would have got without streaming, so the proxy can tell a recall turn from any other.
 */

/** The data lines of one event, joined. */
export function frameData(frame: string): string {
  return frame
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trimStart())
    .join('\n');
}

/** The JSON data of every event of a stream (events whose data is not JSON are skipped). */
function eventsOf(sse: string): Obj[] {
  const out: Obj[] = [];
  for (const frame of sse.split(/\r?\n\r?\n/)) {
    const data = frameData(frame);
    if (data === '' || data === '[DONE]') continue;
    try {
      const v = JSON.parse(data) as unknown;
      if (isObj(v)) out.push(v);
    } catch {
      // not JSON: nothing a recall turn is made of
    }
  }
  return out;
}

/** A Chat Completions stream as one `chat.completion` answer. */
function chatAnswer(events: Obj[]): Obj {
  let content = '';
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  for (const e of events) {
    const choice = Array.isArray(e.choices) && isObj(e.choices[0]) ? e.choices[0] : undefined;
    const delta = isObj(choice?.delta) ? choice.delta : undefined;
    if (typeof delta?.content === 'string') content += delta.content;
    for (const d of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
      if (!isObj(d)) continue;
      const i = typeof d.index === 'number' ? d.index : calls.length;
      calls[i] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
      const fn = isObj(d.function) ? d.function : {};
      if (typeof d.id === 'string') calls[i].id = d.id;
      if (typeof fn.name === 'string') calls[i].function.name += fn.name;
      if (typeof fn.arguments === 'string') calls[i].function.arguments += fn.arguments;
    }
  }
  const message: Obj = { role: 'assistant', content };
  if (calls.length > 0) message.tool_calls = calls.filter(Boolean);
  return { choices: [{ index: 0, message }] };
}

/** An Anthropic Messages stream as one message answer (text, thinking and tool use blocks). */
function anthropicAnswer(events: Obj[]): Obj {
  const blocks: Obj[] = [];
  const inputs: string[] = [];
  for (const e of events) {
    const i = typeof e.index === 'number' ? e.index : -1;
    if (e.type === 'content_block_start' && isObj(e.content_block) && i >= 0) {
      blocks[i] = { ...e.content_block };
      inputs[i] = '';
    } else if (e.type === 'content_block_delta' && isObj(e.delta) && blocks[i] !== undefined) {
      const d = e.delta;
      const b = blocks[i];
      if (typeof d.text === 'string') b.text = `${typeof b.text === 'string' ? b.text : ''}${d.text}`;
      if (typeof d.thinking === 'string')
        b.thinking = `${typeof b.thinking === 'string' ? b.thinking : ''}${d.thinking}`;
      if (typeof d.signature === 'string') b.signature = d.signature;
      if (typeof d.partial_json === 'string') inputs[i] += d.partial_json;
    }
  }
  const content = blocks
    .map((b, i) => {
      if (b === undefined || b.type !== 'tool_use') return b;
      try {
        return { ...b, input: inputs[i] === '' ? (b.input ?? {}) : (JSON.parse(inputs[i]) as Json) };
      } catch {
        return b;
      }
    })
    .filter(Boolean);
  return { role: 'assistant', content };
}

/**
 * Gemini chunks as one answer: every chunk's parts in order, runs of plain text joined (a
 * chunk is a piece of the same turn).
 */
export function geminiAnswer(chunks: Obj[]): Obj {
  const parts: Json[] = [];
  for (const c of chunks)
    for (const p of geminiParts(c)) {
      const last = parts.at(-1);
      const plain = (v: Json | undefined): v is Obj =>
        isObj(v) && typeof v.text === 'string' && Object.keys(v).length === 1;
      if (plain(p) && plain(last))
        parts[parts.length - 1] = { text: `${String(last.text)}${String(p.text)}` };
      else parts.push(p);
    }
  return { candidates: [{ content: { role: 'model', parts }, index: 0 }] };
}

/**
 * The JSON answer a stream of `protocol` stands for, as text, or undefined when it cannot be
 * read (the stream then goes to the client as it came). A Responses stream carries its whole
 * answer in its last event.
 */
export function answerOfStream(protocol: ProtocolName, sse: string): string | undefined {
  const events = eventsOf(sse);
  if (events.length === 0) return undefined;
  if (protocol === 'openai-chat') return JSON.stringify(chatAnswer(events));
  if (protocol === 'anthropic') return JSON.stringify(anthropicAnswer(events));
  if (protocol === 'openai-responses') {
    const done = events.find((e) => e.type === 'response.completed' && isObj(e.response));
    return done === undefined ? undefined : JSON.stringify(done.response);
  }
  return JSON.stringify(geminiAnswer(events));
}
