/**
 * Server-sent events framing (wire-formats §7): `event:` and `data:` lines, blank-line
 * separated; comments (`:`) ignored; multi-line data joined with `\n`. Works on any async
 * iterable of byte chunks (an undici response body).
 */

/** One SSE frame. `event` is absent for Chat Completions (data-only) streams. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** Parses a byte stream into SSE frames. A partial frame left at end of stream is dropped. */
export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  for await (const chunk of chunks) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer[nl] === '\r' ? 2 : 1));
      if (line === '') {
        if (data.length > 0)
          yield event === undefined ? { data: data.join('\n') } : { event, data: data.join('\n') };
        event = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  }
}
