import { describe, expect, it } from '@jest/globals';
import { usageIn, usageTap, type ReportedUsage } from '#src/serve/usage-tap.js';

describe('serve: the usage of an answer, as each wire shape reports it', () => {
  it('reads Anthropic (cache reads and writes count as input), Chat Completions and Responses usage', () => {
    expect(
      usageIn({ usage: { input_tokens: 10, cache_read_input_tokens: 900, cache_creation_input_tokens: 90 } }),
    ).toEqual({ inputTokens: 1_000, cachedInputTokens: 900 });
    expect(
      usageIn({ type: 'message_start', message: { usage: { input_tokens: 7, output_tokens: 1 } } }),
    ).toEqual({
      inputTokens: 7,
      cachedInputTokens: undefined,
    });
    expect(usageIn({ usage: { prompt_tokens: 50, prompt_tokens_details: { cached_tokens: 20 } } })).toEqual({
      inputTokens: 50,
      cachedInputTokens: 20,
    });
    expect(
      usageIn({
        type: 'response.completed',
        response: { usage: { input_tokens: 40, input_tokens_details: { cached_tokens: 8 } } },
      }),
    ).toEqual({ inputTokens: 40, cachedInputTokens: 8 });
    // Anthropic's closing delta carries output tokens only: not a prompt count.
    expect(usageIn({ type: 'message_delta', usage: { output_tokens: 30 } })).toBeUndefined();
  });

  it("reads Gemini's usageMetadata: in one answer, the last SSE chunk, or the last element of a JSON-array stream", async () => {
    const chunk = (prompt: number, cached?: number) => ({
      candidates: [{ content: { role: 'model', parts: [{ text: 'x' }] } }],
      usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: 3, cachedContentTokenCount: cached },
    });
    expect(usageIn(chunk(900, 640))).toEqual({ inputTokens: 900, cachedInputTokens: 640 });
    expect(usageIn([chunk(10), { candidates: [] }, chunk(900, 600)])).toEqual({
      inputTokens: 900,
      cachedInputTokens: 600,
    });
    const read = (stream: boolean, text: string) => {
      let seen: ReportedUsage | undefined;
      const tap = usageTap(stream, (u) => (seen = u));
      tap.write(Buffer.from(text));
      tap.end();
      return seen;
    };
    const sse = `data: ${JSON.stringify(chunk(5))}\r\n\r\ndata: ${JSON.stringify(chunk(4_321, 1_000))}\r\n\r\n`;
    expect(read(true, sse)).toEqual({ inputTokens: 4_321, cachedInputTokens: 1_000 });
    expect(read(false, JSON.stringify([chunk(5), chunk(777)]))).toEqual({
      inputTokens: 777,
      cachedInputTokens: undefined,
    });
  });

  it('finds the usage of a stream even when an event, or a character, is split between chunks', () => {
    const text =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":123,"output_tokens":1}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":9}}\n\n';
    // Split inside the first event, and inside the two bytes of a character of the second.
    const bytes = Buffer.from(text.replace('"output_tokens":9', '"output_tokens":9,"note":"é"'));
    const at = bytes.indexOf('é') + 1;
    const chunks = [
      bytes.subarray(0, 40),
      bytes.subarray(40, 41),
      bytes.subarray(41, at),
      bytes.subarray(at),
    ];
    let seen: ReportedUsage | undefined;
    const tap = usageTap(true, (u) => (seen = u));
    for (const c of chunks) tap.write(c);
    expect(seen).toBeUndefined();
    tap.end();
    expect(seen).toEqual({ inputTokens: 123, cachedInputTokens: undefined });
  });
});
