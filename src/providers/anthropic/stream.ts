import type { Json } from '../messages/message.js';
import { errorFactsFromJson, isRetryableFacts, providerErrorFrom, type CallSite } from './classify-error.js';
import { ProviderError } from './errors.js';
import { truncatedStream } from './http.js';
import type { SseEvent } from './sse.js';

/**
 * Fold SSE streams into the same JSON shapes the non-streaming endpoints return
 * (wire-formats §7), so streaming-only routes share one response parser. Error events
 * mid-stream become classified ProviderErrors; a stream that ends without its terminal
 * event is a (retryable) truncation error; unknown events and `ping` are ignored.
 */

type Obj = { [k: string]: Json };

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseData(site: CallSite, ev: SseEvent): Obj | undefined {
  try {
    const v = JSON.parse(ev.data) as Json;
    return isObj(v) ? v : undefined;
  } catch {
    throw new ProviderError(
      `${site.provider}/${site.model}: stream event ${ev.event ?? 'data'} is not valid JSON`,
      {
        provider: site.provider,
        model: site.model,
        code: 'malformed_json',
        retryable: false,
      },
    );
  }
}

/** An error event after the 200: retryable when its type or code (string or number) says transient. */
function streamError(site: CallSite, payload: Obj): ProviderError {
  const facts = errorFactsFromJson(payload);
  return providerErrorFrom(site, facts, { retryable: isRetryableFacts(facts) });
}

/** OpenAI Responses stream → a `Response` object (`output`, `usage`, `status`, `incomplete_details`). */
export async function foldResponsesStream(site: CallSite, events: AsyncIterable<SseEvent>): Promise<Obj> {
  const items: Json[] = [];
  const text: string[] = [];
  for await (const ev of events) {
    if (ev.data === '[DONE]') break;
    const d = parseData(site, ev);
    if (!d) continue;
    const type = typeof d.type === 'string' ? d.type : ev.event;
    if (type === 'error' || (d.error !== undefined && d.error !== null && type !== 'response.failed'))
      throw streamError(site, d);
    if (type === 'response.output_item.done' && typeof d.output_index === 'number' && isObj(d.item)) {
      items[d.output_index] = d.item;
    } else if (type === 'response.output_text.delta' && typeof d.delta === 'string') {
      text.push(d.delta);
    } else if (type === 'response.failed') {
      throw streamError(site, d);
    } else if ((type === 'response.completed' || type === 'response.incomplete') && isObj(d.response)) {
      const r = d.response;
      const output =
        Array.isArray(r.output) && r.output.length > 0 ? r.output : items.filter((x) => x !== undefined);
      // Deltas only fill in when no authoritative item carried the text.
      if (output.length === 0 && text.length > 0) {
        output.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: text.join('') }],
        });
      }
      return { ...r, output };
    }
  }
  throw truncatedStream(site, 'response.completed');
}

/** Appends one content_block_delta to its block; tool input JSON collects in `partialJson` until the block stops. */
function applyBlockDelta(b: Obj, delta: Obj, i: number, partialJson: Map<number, string>): void {
  if (delta.type === 'text_delta')
    b.text = `${typeof b.text === 'string' ? b.text : ''}${String(delta.text ?? '')}`;
  else if (delta.type === 'thinking_delta')
    b.thinking = `${typeof b.thinking === 'string' ? b.thinking : ''}${String(delta.thinking ?? '')}`;
  else if (delta.type === 'signature_delta') b.signature = delta.signature ?? null;
  else if (delta.type === 'input_json_delta')
    partialJson.set(i, (partialJson.get(i) ?? '') + String(delta.partial_json ?? ''));
  else if (delta.type === 'compaction_delta') {
    if (typeof delta.content === 'string')
      b.content = `${typeof b.content === 'string' ? b.content : ''}${delta.content}`;
    if ('encrypted_content' in delta) b.encrypted_content = delta.encrypted_content ?? null;
  }
}

/** Anthropic Messages stream → a `Message` object (`content`, `stop_reason`, `usage`, `context_management`). */
export async function foldMessagesStream(site: CallSite, events: AsyncIterable<SseEvent>): Promise<Obj> {
  let message: Obj | undefined;
  const blocks: Obj[] = [];
  const partialJson = new Map<number, string>();
  for await (const ev of events) {
    const d = parseData(site, ev);
    if (!d) continue;
    const type = typeof d.type === 'string' ? d.type : ev.event;
    switch (type) {
      case 'error':
        throw streamError(site, d);
      case 'message_start':
        if (isObj(d.message)) message = { ...d.message };
        break;
      case 'content_block_start':
        if (typeof d.index === 'number' && isObj(d.content_block)) blocks[d.index] = { ...d.content_block };
        break;
      case 'content_block_delta': {
        const i = typeof d.index === 'number' ? d.index : -1;
        const b = blocks[i];
        if (b && isObj(d.delta)) applyBlockDelta(b, d.delta, i, partialJson);
        break;
      }
      case 'content_block_stop': {
        const i = typeof d.index === 'number' ? d.index : -1;
        const pj = partialJson.get(i);
        if (blocks[i] && pj !== undefined) {
          try {
            blocks[i].input = JSON.parse(pj || '{}') as Json;
          } catch {
            blocks[i].input = { raw: pj };
          }
        }
        break;
      }
      case 'message_delta':
        if (!message) break;
        if (isObj(d.delta)) {
          if ('stop_reason' in d.delta) message.stop_reason = d.delta.stop_reason ?? null;
          if ('stop_sequence' in d.delta) message.stop_sequence = d.delta.stop_sequence ?? null;
        }
        // Usage in message_delta is cumulative: merge over the start usage.
        if (isObj(d.usage)) message.usage = { ...(isObj(message.usage) ? message.usage : {}), ...d.usage };
        if ('context_management' in d) message.context_management = d.context_management ?? null;
        break;
      case 'message_stop':
        if (!message) throw truncatedStream(site, 'message_start');
        return { ...message, content: blocks.filter((b) => b !== undefined) };
      default:
        break; // ping and unknown events
    }
  }
  throw truncatedStream(site, 'message_stop');
}

/** Chat Completions stream → a `chat.completion` object (one choice, text only). */
export async function foldChatStream(site: CallSite, events: AsyncIterable<SseEvent>): Promise<Obj> {
  let content = '';
  let finish: Json = null;
  let usage: Json = null;
  let sawDone = false;
  for await (const ev of events) {
    if (ev.data.trim() === '[DONE]') {
      sawDone = true;
      break;
    }
    const d = parseData(site, ev);
    if (!d) continue;
    if (d.error !== undefined && d.error !== null) throw streamError(site, d);
    if (isObj(d.usage)) usage = d.usage;
    const choice = Array.isArray(d.choices) && isObj(d.choices[0]) ? d.choices[0] : undefined;
    if (!choice) continue;
    if (isObj(choice.delta) && typeof choice.delta.content === 'string') content += choice.delta.content;
    if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
  }
  if (!sawDone && finish === null) throw truncatedStream(site, 'data: [DONE]');
  return {
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
    usage,
  };
}
