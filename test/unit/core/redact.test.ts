import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { redactSecrets } from '#src/core/redact.js';

// Real-looking keys: a provider prefix and a random body with at least one digit, as issued keys have.
const keyBody = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9_-]{12,40}$/),
    fc.integer({ min: 0, max: 9 }),
    fc.stringMatching(/^[A-Za-z0-9]{4,12}$/),
  )
  .map(([a, d, b]) => `${a}${d}${b}`);
const realKey = fc
  .tuple(fc.constantFrom('sk-', 'sk-proj-', 'xai-', 'gsk_', 'sk-ant-api03-'), keyBody)
  .map(([p, b]) => p + b);
// How providers show a rejected key: whole, or masked in the middle.
const shownKey = fc.oneof(
  realKey,
  realKey.map((k) => `${k.slice(0, 6)}${'*'.repeat(20)}${k.slice(-4)}`),
);
const label = fc.constantFrom('api_key: ', 'API key provided: ', 'Incorrect API key provided: ', 'api-key=');
// Ordinary words: letters only, so never shaped like a key.
const word = fc.stringMatching(/^[A-Za-z]{1,14}$/);
const prose = fc.array(word, { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' '));

describe('redactSecrets on upstream error text (S4)', () => {
  it('S4: a 401 body keeps its words; only the key it echoes is redacted', () => {
    const body =
      'invalid_api_key: Incorrect API key provided: sk-abc12***************************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.';
    expect(redactSecrets(body, {})).toBe(
      'invalid_api_key: Incorrect API key provided: [REDACTED]. You can find your API key at https://platform.openai.com/account/api-keys.',
    );
  });

  it('S4 (property): a real-looking key after an API-key label is always redacted, the words around it stay', () => {
    fc.assert(
      fc.property(prose, label, shownKey, prose, (before, l, key, after) => {
        const out = redactSecrets(`${before} ${l}${key} ${after}`, {});
        expect(out).not.toContain(key);
        expect(out).toBe(`${before} ${l}[REDACTED] ${after}`);
      }),
    );
  });

  it('S4 (property): ordinary prose after an api_key: label is kept as written', () => {
    fc.assert(
      fc.property(label, prose, (l, words) => {
        const text = `invalid_api_key: ${l}${words}`;
        expect(redactSecrets(text, {})).toBe(text);
      }),
    );
  });

  it('S4: quoted key fields and key headers are redacted whatever their value looks like', () => {
    expect(redactSecrets('{"api_key": "abcdefghijkl"}', {})).toBe('{"api_key": "[REDACTED]"}');
    expect(redactSecrets('x-api-key: zzzzzzzzzzzz', {})).toBe('x-api-key: [REDACTED]');
    expect(redactSecrets('Authorization: Bearer abcdefghijklmnop1234', {})).toBe(
      'Authorization: Bearer [REDACTED]',
    );
  });
});
