import { describe, expect, it } from '@jest/globals';
import { msg } from '#src/messages/message.js';
import { resolveRoute } from '#src/providers/catalog.js';
import type { HttpOptions } from '#src/providers/http.js';
import { ProviderError } from '#src/core/errors.js';
import { HTTP_DEFAULTS, httpLimits, type WaitingInfo } from '#src/providers/http-limits.js';
import { createStandaloneClient } from '#src/providers/openai-responses/compact-client.js';
import { createCompactorSession, CompactorOptionsError } from '#src/index.js';
import { deferred } from '#support/deferred.js';
import { useFakeProviders } from '#support/fake-providers.js';
import { catalogWindow } from '#support/fake-window.js';

const KEY = 'sk-test-FAKEKEY0123456789abcdef';
const input = [msg.user('Run the tests.'), msg.assistant('12 passing')];

const fakes = useFakeProviders({ window: catalogWindow('openai', 'gpt-5.4') });
const client = (http: HttpOptions) =>
  createStandaloneClient(
    resolveRoute({ provider: 'openai', model: 'gpt-5.4', baseUrl: fakes.oai.url }, { OPENAI_API_KEY: KEY }),
    http,
  );

describe('bounded time of provider calls (S4)', () => {
  it('S4: defaults: 120 s per request, 4 attempts, 300 s for the whole call (was 600 s × 4)', () => {
    expect(httpLimits()).toEqual({ timeoutMs: 120_000, retries: 3, retryBudgetMs: 300_000 });
    // A hung provider is bounded by the budget, not by attempts × timeout (4 × 120 s = 480 s).
    expect(HTTP_DEFAULTS.retryBudgetMs).toBeLessThan((HTTP_DEFAULTS.retries + 1) * HTTP_DEFAULTS.timeoutMs);
  });

  it('S4: the retry budget ends a hung provider before the attempts run out, and says so', async () => {
    fakes.oai.script.push(...Array.from({ length: 11 }, () => ({ kind: 'hang' as const })));
    const before = fakes.oai.requests.length;
    const err = await client({
      retries: 10,
      timeoutMs: 200,
      retryBudgetMs: 500,
      minRetryDelayMs: 1,
      maxRetryDelayMs: 5,
    })
      .compactStandalone({ model: 'gpt-5.4', input })
      .catch((e: unknown) => e);
    fakes.oai.script.length = 0;
    expect(err).toBeInstanceOf(ProviderError);
    const e = err as ProviderError;
    expect(e.info.code).toBe('timeout');
    const made = Number(/gave up after (\d+) of 11 attempts in /.exec(e.message)?.[1]);
    // Each hung attempt lasts its whole timeout (200 ms) unless the budget cut it shorter:
    // three full attempts would already exceed 500 ms, so at most three start with budget left.
    expect(made).toBeGreaterThanOrEqual(1); // 1 when a loaded machine let the first attempt overrun the budget
    expect(made).toBeLessThanOrEqual(3);
    expect(fakes.oai.requests.length - before).toBeLessThanOrEqual(made); // an attempt cut short may end before the server has read its body
    expect(e.message).toMatch(/limits: 200 ms per request, 500 ms in all\)$/);
    expect(e.message).not.toContain('\n');
  });

  it('S4: onWaiting hears about a request in flight: provider, model, attempt n of N', async () => {
    const seen = deferred<WaitingInfo>();
    fakes.oai.script.push({ kind: 'hold', until: seen.promise });
    const started = Date.now();
    const r = await client({
      retries: 2,
      progressIntervalMs: 10,
      onWaiting: (info) => seen.resolve(info),
    }).compactStandalone({ model: 'gpt-5.4', input });
    expect(r.items.length).toBeGreaterThan(0);
    const info = await seen.promise;
    expect(info).toMatchObject({ provider: 'openai', model: 'gpt-5.4', attempt: 1, attempts: 3 });
    // Time since the call started, in whole milliseconds: never more than the time around it.
    expect(Number.isInteger(info.elapsedMs)).toBe(true);
    expect(info.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(info.elapsedMs).toBeLessThanOrEqual(Date.now() - started);
  });

  it('D3: the session option http is validated: a bad timeout is one line naming http.timeoutMs', () => {
    expect(() => createCompactorSession({ http: { timeoutMs: -5 } })).toThrow(CompactorOptionsError);
    expect(() => createCompactorSession({ http: { timeoutMs: -5 } })).toThrow(
      /^createCompactorSession: options\.http\.timeoutMs: /,
    );
    expect(() => createCompactorSession({ http: { timeout: 5 } as never })).toThrow(
      /options\.http: .*timeout/,
    );
  });
});
