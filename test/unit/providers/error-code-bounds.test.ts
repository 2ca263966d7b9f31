import { describe, expect, it } from '@jest/globals';
import { errorFactsFromBody, providerErrorFrom } from '#src/providers/classify-error.js';

const SECRET = 'zz-secret-9f8e7d6c5b4a';
const site = { provider: 'p', model: 'm', secrets: [SECRET] };

describe('provider error codes are bounded and secret-free like the cause (S4)', () => {
  it('S4: an error code echoing the key is redacted in the message and in info.code', () => {
    const body = JSON.stringify({ error: { code: `invalid key ${SECRET}`, message: 'bad key' } });
    const e = providerErrorFrom(site, errorFactsFromBody(401, body));
    expect(e.message).not.toContain(SECRET);
    expect(e.info.code ?? '').not.toContain(SECRET);
  });

  it('S4: a huge multi-line error code does not make the message unbounded', () => {
    const body = JSON.stringify({ error: { code: `x\n${'y'.repeat(20_000)}`, message: 'boom' } });
    const e = providerErrorFrom(site, errorFactsFromBody(500, body));
    expect(e.message.length).toBeLessThan(600);
    expect(e.message).not.toContain('\n');
    expect((e.info.code ?? '').length).toBeLessThanOrEqual(100);
  });
});
