import type { Json } from '../../messages/message.js';
import type { CallSite } from '../classify-error.js';
import { truncatedStream } from '../http.js';
import {
  eventData,
  isEventObject as isObj,
  streamError,
  type EventObject as Obj,
  type SseEvent,
} from '../sse.js';

/**
 * Folds an Anthropic Messages stream into the `Message` object the non-streaming endpoint
 * returns. Error events mid-stream become classified errors; a stream that ends before
 * `message_stop` is a (retryable) truncation error; `ping` and unknown events are ignored.
 */

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
    const d = eventData(site, ev);
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
