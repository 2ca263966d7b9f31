import { describe, expect, it } from '@jest/globals';
import { errorFactsFromBody, providerErrorFrom } from '#src/providers/classify-error.js';
import { ContextCapacityError, ProviderError } from '#src/core/errors.js';
import { overflowBody, type OverflowShape } from '#support/fake-http.js';

const site = { provider: 'p', model: 'm', secrets: ['zz-secret-9f8e7d6c5b4a'] };

describe('error classification (L5, L6, S4)', () => {
  const expected: Record<OverflowShape, number | undefined> = {
    'openai-responses': undefined,
    'openai-chat': 4294,
    deepseek: 122942,
    vllm: 37552,
    gemini: 1200293,
    openrouter: 42832,
    groq: undefined,
    xai: 136973,
    anthropic: 219898,
    'anthropic-413': undefined,
  };
  for (const [shape, tokens] of Object.entries(expected) as [OverflowShape, number | undefined][]) {
    it(`L5: ${shape} overflow → ContextCapacityError${tokens ? ` with inputTokens ${tokens}` : ''}`, () => {
      const o = overflowBody(shape);
      const e = providerErrorFrom(site, errorFactsFromBody(o.status, JSON.stringify(o.body)));
      expect(e).toBeInstanceOf(ContextCapacityError);
      expect(e.info.inputTokens).toBe(tokens);
      expect(e.info.retryable).toBe(false);
      expect(e.message).toMatch(/^p\/m HTTP 4\d\d/);
    });
  }

  it('L6: ordinary errors stay ProviderError; 429/5xx are retryable, 400/401 are not', () => {
    const e400 = providerErrorFrom(
      site,
      errorFactsFromBody(
        400,
        '{"error":{"message":"No tool call found for function call output with call_id call_X.","type":"invalid_request_error","param":"input","code":null}}',
      ),
    );
    expect(e400).not.toBeInstanceOf(ContextCapacityError);
    expect(e400.info).toMatchObject({ status: 400, code: 'invalid_request_error', retryable: false });
    expect(providerErrorFrom(site, { status: 429 }).info.retryable).toBe(true);
    expect(providerErrorFrom(site, { status: 529, type: 'overloaded_error' }).info.retryable).toBe(true);
    expect(providerErrorFrom(site, { status: 401 }).info.retryable).toBe(false);
  });

  it('S4: the cause is bounded, one line, and secret-free; the JSON body is not repeated', () => {
    const long = 'x'.repeat(5000);
    const body = JSON.stringify({
      error: {
        message: `bad key zz-secret-9f8e7d6c5b4a and Bearer abcdefghijklmnop ${long}`,
        type: 'authentication_error',
      },
    });
    const e = providerErrorFrom(site, errorFactsFromBody(401, body));
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.message.length).toBeLessThan(400);
    expect(e.message).not.toContain('zz-secret-9f8e7d6c5b4a');
    expect(e.message).not.toContain('abcdefghijklmnop');
    expect(e.message).not.toContain('{"error"');
    expect(e.message).not.toMatch(/\n/);
  });

  it('L6: a non-JSON body becomes the bounded message', () => {
    const e = providerErrorFrom(site, errorFactsFromBody(502, '<html>Bad Gateway</html>'));
    expect(e.message).toContain('Bad Gateway');
    expect(e.info.retryable).toBe(true);
  });
});
