import { createParser } from 'eventsource-parser';
import type { Json } from '../messages/message.js';
import { errorFactsFromJson, isRetryableFacts, providerErrorFrom, type CallSite } from './classify-error.js';
import { ProviderError } from '../core/errors.js';

/**
 * Server-sent events framing by `eventsource-parser`: `event:` and `data:`
 * lines, blank-line separated, comments ignored, multi-line data joined with `\n`. Works on any
 * async iterable of byte chunks (an undici response body). Each dialect folds its own stream into
 * the JSON its non-streaming endpoint returns, so streaming-only routes share one response
 * reader; the helpers below are what every fold needs.
 */

/** One SSE frame. `event` is absent for Chat Completions (data-only) streams. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** Parses a byte stream into SSE frames. A partial frame left at end of stream is dropped. */
export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const ready: SseEvent[] = [];
  const parser = createParser({
    onEvent: ({ event, data }) => ready.push(event === undefined ? { data } : { event, data }),
  });
  for await (const chunk of chunks) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    yield* ready.splice(0);
  }
}

/** The JSON object an event carries. */
export type EventObject = { [k: string]: Json };

/** Whether a value is a JSON object (not null, not an array). */
export function isEventObject(v: unknown): v is EventObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An event's data as a JSON object (undefined for other JSON); data that is not JSON is an error. */
export function eventData(site: CallSite, ev: SseEvent): EventObject | undefined {
  try {
    const v = JSON.parse(ev.data) as Json;
    return isEventObject(v) ? v : undefined;
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
export function streamError(site: CallSite, payload: EventObject): ProviderError {
  const facts = errorFactsFromJson(payload);
  return providerErrorFrom(site, facts, { retryable: isRetryableFacts(facts) });
}
