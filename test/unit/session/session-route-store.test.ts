import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CompactorOptionsError } from '#src/core/errors.js';
import { freeEncoders } from '#src/estimate/index.js';
import { msg } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import { SNAPSHOTS_DIR } from '#src/store/index.js';
import { agentSession, sessionDirs } from '#support/session/fixtures.js';

afterAll(freeEncoders);
const tempDir = sessionDirs();
const KEY = 'sk-test-FAKEKEY0123456789abcdef';

describe('what a command-line front end needs from a session', () => {
  it('S1: the route reports its endpoint, wire and key variable (never the key); the estimator follows its encoding', () => {
    const s = createCompactorSession({
      route: { provider: 'openai', model: 'gpt-4', env: { OPENAI_API_KEY: KEY } },
    });
    expect(s.route).toMatchObject({ provider: 'openai', model: 'gpt-4', wire: 'responses' });
    expect(s.route.apiKeyEnv).toBe('OPENAI_API_KEY');
    expect(s.route.baseUrl).toMatch(/^https:\/\//);
    expect(JSON.stringify(s.route)).not.toContain(KEY);
    // gpt-4 counts with cl100k_base; the session's own estimator must agree with the route.
    expect(s.route.encoding).toBe('cl100k_base');
    expect(s.estimator.encoding).toBe('cl100k_base');
    expect(createCompactorSession().estimator.encoding).toBe('o200k_base');
  });

  it('S1: route.env may be process.env itself (not a plain object)', () => {
    expect(() => createCompactorSession({ route: { provider: 'offline', env: process.env } })).not.toThrow();
  });

  it("C3: a caller's summarizer with its inline client compacts natively inside a request (NativeInline), the summarizer its fallback", () => {
    const summarizer = {
      provider: 'proxy',
      model: 'm',
      summarize: () => Promise.reject(new Error('unused')),
    };
    const inline = {
      provider: 'proxy',
      model: 'm',
      compactInline: () => Promise.resolve({ kind: 'fallback' as const, reason: 'no-compaction' as const }),
    };
    expect(createCompactorSession({ summarizer, inline }).route.strategy.kind).toBe('nativeInline');
    expect(createCompactorSession({ summarizer }).route.strategy.kind).toBe('local');
    expect(() => createCompactorSession({ summarizer, inline: { provider: 'proxy' } as never })).toThrow(
      CompactorOptionsError,
    );
  });

  it('S1: an unknown provider is a RouteError that names offline among the known providers', () => {
    expect(() => createCompactorSession({ route: { provider: 'nope', model: 'm' } })).toThrow(
      /known: offline, /,
    );
  });

  it('R2: with a store, a turn below the threshold writes no checkpoint, a compacting one does, and a compaction leaves its summary snapshot', async () => {
    const dir = tempDir();
    const s = createCompactorSession({ sessionDir: dir, history: agentSession(8_000) });
    expect((await s.runTurn()).decision).toBe('below-threshold');
    expect(existsSync(join(dir, SNAPSHOTS_DIR, 'turn.json'))).toBe(false);
    s.close();
    const small = createCompactorSession({
      sessionDir: dir,
      history: agentSession(8_000),
      limits: { capacity: 4_000 },
      policy: { clearWhenPassBuysFewerTurns: 0 },
    });
    expect((await small.runTurn()).decision).toBe('compacted');
    expect(existsSync(join(dir, SNAPSHOTS_DIR, 'turn.json'))).toBe(true);
    small.close();
    const s2 = createCompactorSession({ sessionDir: dir });
    const report = await s2.compact();
    expect(s2.store?.loadSnapshot('compaction')).toMatchObject({
      status: report.status,
      mode: 'manual',
      itemsBefore: report.itemsBefore,
    });
    s2.close();
  });

  it('R1: a history for a store that already holds one is a one-line options error', () => {
    const dir = tempDir();
    createCompactorSession({ sessionDir: dir, history: [msg.user('first')] }).close();
    expect(() => createCompactorSession({ sessionDir: dir, history: [msg.user('second')] })).toThrow(
      CompactorOptionsError,
    );
  });
});
