import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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

  it('passes a stream through unchanged and finds its usage even when an event is split between chunks', async () => {
    const text =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":123,"output_tokens":1}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":9}}\n\n';
    const chunks = [text.slice(0, 40), text.slice(40, 41), text.slice(41)].map((c) => Buffer.from(c));
    let seen: ReportedUsage | undefined;
    let out = '';
    await pipeline(
      Readable.from(chunks),
      usageTap(true, (u) => (seen = u)),
      async (source: AsyncIterable<Buffer>) => {
        for await (const c of source) out += c.toString();
      },
    );
    expect(out).toBe(text);
    expect(seen).toEqual({ inputTokens: 123, cachedInputTokens: undefined });
  });
});
