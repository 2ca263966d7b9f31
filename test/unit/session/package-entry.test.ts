import { afterAll, describe, expect, it } from '@jest/globals';
import * as api from '#src/index.js';
import * as formats from '#src/entries/formats.js';
import * as machines from '#src/entries/machines.js';
import * as projection from '#src/entries/projection.js';
import * as providers from '#src/entries/providers.js';
import * as store from '#src/entries/store.js';

afterAll(api.freeEncoders);

describe('package entries (src/index.ts and the unstable ones in src/entries/)', () => {
  it('the root entry holds the session, the message model and the errors', () => {
    expect(typeof api.createCompactorSession).toBe('function');
    expect(typeof api.openSessionRecords).toBe('function');
    expect(typeof api.createJsonlInspector).toBe('function');
    for (const E of [
      api.ProviderError,
      api.ContextCapacityError,
      api.RouteError,
      api.UserError,
      api.CompactorOptionsError,
      api.StoredSessionConflictError,
      api.WindowTooSmallError,
    ])
      expect(E.prototype).toBeInstanceOf(Error);
    expect(api.MessageSchema.safeParse(api.msg.user('hi')).success).toBe(true);
  });

  it('report texts and internal helpers stay out of every entry', () => {
    const everything = { ...api, ...projection, ...providers, ...store, ...formats, ...machines };
    for (const name of ['nothingToCompactLine', 'CACHE_NOTE', 'MAX_ROOT_CAUSE_CHARS', 'describeCompaction'])
      expect(Object.keys(everything)).not.toContain(name);
  });

  it('the building blocks are under their subpath entries', () => {
    const functions = {
      projection: [api.createEstimator, projection.projectRequest, projection.normalizeHistory],
      more: [projection.clearOldToolResults, projection.resolveBudgets, projection.createCacheHealthMonitor],
      formats: [formats.readSessionFile, formats.parseSession, formats.exportSession],
      machines: [machines.createTurnRunner, machines.createLocalSummarizer, machines.createStatelyInspector],
      providers: [providers.createOfflineSummarizer, providers.resolveRoute, providers.selectStrategy],
      clients: [providers.createProviderClients],
      store: [store.openSessionStore, store.loadEventLog],
    };
    for (const fn of Object.values(functions).flat()) expect(typeof fn).toBe('function');
    expect(machines.turnMachine.id).toBe('turn');
    expect(providers.OFFLINE_CONTEXT_WINDOW).toBe(32_000);
  });

  it('D1/H2: a session built only from the root entry runs a turn offline', async () => {
    const s = api.createCompactorSession({ history: [api.msg.user('hello')] });
    const r = await s.runTurn({ pending: [api.msg.assistant('hi')] });
    expect(r.decision).toBe('below-threshold');
    expect(s.history.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});
