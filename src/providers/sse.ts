import { createParser } from 'eventsource-parser';

/**
 * Server-sent events framing by `eventsource-parser`: `event:` and `data:`
 * lines, blank-line separated, comments ignored, multi-line data joined with `\n`. Works on any
 * async iterable of byte chunks (an undici response body).
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
