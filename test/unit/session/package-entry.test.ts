import { afterAll, describe, expect, it } from '@jest/globals';
import * as api from '#src/index.js';

afterAll(api.freeEncoders);

describe('package entry (src/index.ts)', () => {
  it('exports the session API and the building blocks under it', () => {
    const functions = [
      'createCompactorSession',
      'createCacheHealthMonitor',
      'createEstimator',
      'projectRequest',
      'normalizeHistory',
      'clearOldToolResults',
      'resolveBudgets',
      'readSessionFile',
      'parseSession',
      'exportSession',
      'createTurnRunner',
      'createLocalSummarizer',
      'createOfflineSummarizer',
      'resolveRoute',
      'selectStrategy',
      'createProviderClients',
      'openSessionStore',
    ] as const;
    for (const name of functions) expect(typeof api[name]).toBe('function');
    for (const E of [
      api.ProviderError,
      api.ContextCapacityError,
      api.BudgetError,
      api.RouteError,
      api.UserError,
      api.CompactorOptionsError,
    ])
      expect(E.prototype).toBeInstanceOf(Error);
    expect(api.MessageSchema.safeParse(api.msg.user('hi')).success).toBe(true);
    expect(api.OFFLINE_CONTEXT_WINDOW).toBe(32_000);
  });

  it('D1/H2: a session built only from the entry point runs a turn offline', async () => {
    const s = api.createCompactorSession({ history: [api.msg.user('hello')] });
    const r = await s.runTurn({ pending: [api.msg.assistant('hi')] });
    expect(r.decision).toBe('below-threshold');
    expect(s.history.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});
