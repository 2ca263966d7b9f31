import { describe, expect, it } from '@jest/globals';
import { retryAfterMs } from '#src/providers/http.js';

describe('retry-after parsing (S4 bounded backoff)', () => {
  it('S4: retry-after-ms wins over retry-after; seconds and HTTP dates are read', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250.5', 'retry-after': '30' })).toBe(250.5);
    expect(retryAfterMs({ 'retry-after': '2' })).toBe(2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now)).toBe(5000);
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterMs({})).toBeUndefined();
  });
});
