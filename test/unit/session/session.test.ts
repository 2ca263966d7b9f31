import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { RouteError } from '#src/core/errors.js';
import { createCompactorSession, OFFLINE_CONTEXT_WINDOW, CACHE_NOTE } from '#src/session/index.js';
import { receiptLine } from '#src/session/report.js';
import { openSessionStore } from '#src/store/index.js';
import { ABSTRACT_MAX_OUTPUT_TOKENS, isSummaryMessage } from '#src/summary/index.js';
import { UserError, WindowTooSmallError } from '#src/core/errors.js';
import { agentSession, sessionDirs } from '#support/session/fixtures.js';

afterAll(freeEncoders);
const django: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]
  .messages;
const tempDir = sessionDirs();
const low = { inputTokens: 20_000, cachedInputTokens: 0 };

describe('createCompactorSession: history and requests', () => {
  it('D1: append validates with MessageSchema; a bad message is a one-line UserError and nothing is appended', () => {
    const s = createCompactorSession();
    s.append(msg.user('hello'));
    const bad = { role: 'robot', content: 'x' } as unknown as Message;
    expect(() => s.append(msg.user('ok'), bad)).toThrow(UserError);
    expect(() => s.append(bad)).toThrow(/^append: message\[0\]\.role: /);
    expect(s.history).toHaveLength(1);
  });

  it('B1: the offline route defaults to a 32,000-token window; limits.capacity overrides it', () => {
    expect(OFFLINE_CONTEXT_WINDOW).toBe(32_000);
    expect(createCompactorSession().budgets.capacity).toBe(32_000);
    expect(createCompactorSession({ limits: { capacity: 64_000 } }).budgets.capacity).toBe(64_000);
    expect(createCompactorSession().route).toMatchObject({
      provider: 'offline',
      strategy: { kind: 'local' },
    });
  });

  it('D3: invalid options name the field; unknown providers are RouteErrors', () => {
    expect(() => createCompactorSession({ limits: { capacity: -5 } })).toThrow(
      /^createCompactorSession: options\.limits\.capacity: /,
    );
    expect(() => createCompactorSession({ route: { provider: 'nope', model: 'm' } })).toThrow(RouteError);
    expect(() => createCompactorSession({ route: { provider: 'openai-compatible' } })).toThrow(
      /route\.model is required/,
    );
  });

  it('C10/C11: prepareRequest clears locally with diagnostics unless an interactive request carries native edits (preset vtcode)', () => {
    const s = createCompactorSession({
      preset: 'vtcode',
      history: django,
      limits: { capacity: 32_000, reservedOutput: 4_000 },
    });
    const history = s.history;
    const headless = s.prepareRequest({ nativeContextEdits: true });
    expect(headless.diagnostics.clearingApplied).toBe(true);
    expect(headless.diagnostics.clearedResults).toBeGreaterThan(0);
    expect(headless.diagnostics.projectedTokens).toBeLessThan(headless.diagnostics.originalTokens);
    expect(headless.budgets.localTrigger).toBe(16_800);
    const native = s.prepareRequest({ interactive: true, nativeContextEdits: true });
    expect(native.diagnostics.clearingApplied).toBe(false);
    expect(native.diagnostics.reason).toMatch(/native context edits/);
    expect(s.history).toBe(history); // projection never writes back
    expect(s.history).toEqual(django);
  });

  it('C1: the defaults (preset compactor) send every tool result; preset vtcode as an option or inside policy clears', () => {
    const limits = { capacity: 32_000, reservedOutput: 4_000 };
    const plain = createCompactorSession({ history: django, limits }).prepareRequest();
    expect(plain.diagnostics.clearedResults).toBe(0);
    expect(plain.diagnostics.clearingApplied).toBe(false);
    const seed = createCompactorSession({ history: django, limits, preset: 'vtcode' }).prepareRequest();
    expect(seed.diagnostics.clearedResults).toBeGreaterThan(0);
    const inPolicy = createCompactorSession({ history: django, limits, policy: { preset: 'vtcode' } });
    expect(inPolicy.prepareRequest().messages).toEqual(seed.messages);
    // policy.preset wins over the top-level option.
    const both = createCompactorSession({
      history: django,
      limits,
      preset: 'vtcode',
      policy: { preset: 'compactor' },
    });
    expect(both.prepareRequest().diagnostics.clearedResults).toBe(0);
    expect(() => createCompactorSession({ preset: 'seed' as 'vtcode' })).toThrow(/options\.preset/);
  });

  it('T3: after recordUsage, clearing inside the anchored prefix lowers the reported pressure to the projection', () => {
    const estimator = createEstimator();
    const page = (n: number) =>
      `page ${n}: ${'configuration, options and examples of the package. '.repeat(285)}`;
    const h: Message[] = [msg.user('read the docs')];
    for (let i = 0; i < 6; i++)
      h.push(
        msg.assistant('', [{ id: `r${i}`, name: 'read_file', arguments: `{"path":"p${i}"}` }]),
        msg.tool(`r${i}`, page(i)),
      );
    h.push(msg.assistant('read them all'));
    const s = createCompactorSession({
      policy: { preset: 'vtcode' },
      history: h,
      estimator,
      limits: { capacity: 32_000, reservedOutput: 4_000 },
    });
    const first = s.prepareRequest();
    expect(first.diagnostics.clearingApplied).toBe(false);
    s.recordUsage({ inputTokens: first.pressure.tokens, cachedInputTokens: 0 }, first.messages);
    s.append(msg.user(`now summarise: ${'the findings so far, '.repeat(500)}`));
    const second = s.prepareRequest();
    expect(second.diagnostics.clearedResults).toBeGreaterThan(0);
    // Same last anchored message, but results inside the anchored prefix were cleared.
    expect(second.messages[h.length - 1]).toBe(first.messages[h.length - 1]);
    expect(second.pressure).toEqual({ source: 'anchored', tokens: estimator.history(second.messages) });
  });

  it('B2: prefix tokens are estimated from the envelope when not given', () => {
    const bare = createCompactorSession();
    const withEnvelope = createCompactorSession({
      envelope: { provider: 'offline', model: 'm', system: 'You are an agent. '.repeat(50) },
    });
    expect(bare.limits.prefixTokens).toBe(0);
    expect(withEnvelope.limits.prefixTokens).toBeGreaterThan(200);
    expect(withEnvelope.budgets.historyBudget).toBe(32_000 - (withEnvelope.limits.prefixTokens ?? 0));
  });
});

describe('createCompactorSession: turns and compaction', () => {
  it('H2/H6: a turn below the threshold makes no summary call and keeps the same history array', async () => {
    const s = createCompactorSession({ history: agentSession() });
    const before = s.history;
    const r = await s.runTurn();
    expect(r.decision).toBe('below-threshold');
    expect(r.summaryCalls).toBe(0);
    expect(s.history).toBe(before);
  });

  it('§14: a window too small for the fixed part of a request refuses the turn with WindowTooSmallError and leaves no checkpoint', async () => {
    const dir = tempDir();
    const s = createCompactorSession({
      sessionDir: dir,
      limits: { capacity: 2_000, reservedOutput: 200, prefixTokens: 1_900 },
    });
    s.append(msg.system('You are a coding agent.'), msg.user('Fix the failing test.'));
    const e = await s.runTurn().catch((x: unknown) => x);
    expect(WindowTooSmallError.isInstance(e)).toBe(true);
    expect((e as WindowTooSmallError).code).toBe('window-too-small');
    expect(existsSync(join(dir, 'snapshots', 'turn.json'))).toBe(false);
  });

  it('H1/H3/R1: pending messages are stored first; a compacting turn replaces history, writes the full-history artifact and a boundary', async () => {
    const dir = tempDir();
    const s = createCompactorSession({
      sessionDir: dir,
      limits: { capacity: 32_000, reservedOutput: 4_000 },
    });
    s.append(...django.slice(0, -1));
    const r = await s.runTurn({ pending: django.slice(-1) });
    expect(r.decision).toBe('compacted');
    expect(r.summaryCalls).toBe(1);
    expect(r.boundary).not.toBeNull();
    expect(isSummaryMessage(s.history.find((m) => m.role !== 'system')!)).toBe(true);
    expect(s.history.length).toBeLessThan(django.length);
    const reopened = openSessionStore(dir, { create: false }); // a reader: the session holds the lock
    expect(reopened.loadHistory()).toEqual(s.history);
    const [b] = reopened.listBoundaries();
    expect(b).toMatchObject({
      before: django.length,
      after: s.history.length,
      reason: 'automatic',
      strategy: 'local',
    });
    expect(reopened.restoreAt(b.id)).toEqual(django);
    expect(readFileSync(join(dir, 'events.jsonl'), 'utf8')).toContain('"thread.compact_boundary"');
    reopened.close();
    s.close();
  });

  it('S3/S5: manual compaction reports elapsed time, mode, item counts and the cache note; it resets only the streak', async () => {
    let now = 1_000;
    const s = createCompactorSession({ history: django, clock: { now: () => (now += 250) } });
    s.cacheHealth.recordUsage(low);
    s.cacheHealth.recordUsage(low);
    const totals = s.cacheHealth.state().totalInputTokens;
    const r = await s.compact({ instructions: 'Keep the failing test names.' });
    expect(r.status).toBe('compacted');
    expect(r.mode).toBe('manual');
    expect(r.itemsBefore).toBe(django.length);
    expect(r.itemsAfter).toBe(s.history.length);
    expect(r.elapsedMs).toBeGreaterThan(0);
    expect(r.message).toBe(
      `Compacted (manual, local) in ${(r.elapsedMs / 1000).toFixed(1)} s: ${django.length} → ${r.itemsAfter} context items.${receiptLine(r.receipt)} ${CACHE_NOTE}`,
    );
    expect(r.cacheNote).toBe(CACHE_NOTE);
    expect(s.cacheHealth.state()).toMatchObject({ lowReuseStreak: 0, totalInputTokens: totals });
  });

  it('S4/S5: a failed compaction keeps history, gives a bounded root cause, and does not reset the streak', async () => {
    const lines: string[] = [];
    const s = createCompactorSession({
      history: django,
      limits: { capacity: 1_000 },
      log: (l) => lines.push(l),
    });
    s.cacheHealth.recordUsage(low);
    const before = s.history;
    const r = await s.compact({ mode: 'recovery' });
    expect(r.status).toBe('failed');
    expect(s.history).toBe(before);
    expect(r.summaryCalls).toBe(0);
    expect(r.rootCause).toMatch(/^summary budget exhausted: summary input budget/);
    expect(r.message).toBe(
      `Compaction (recovery) failed; history unchanged (${django.length} context items): ${r.rootCause}`,
    );
    expect(r.cacheNote).toBeNull();
    expect(s.cacheHealth.state().lowReuseStreak).toBe(1);
    expect(lines.join('\n')).toMatch(/recovery compaction failed \(budget\)/);
  });

  it('S4: a failed model-switch compaction says the model changed and the turn continues on the full history with a resume note', async () => {
    const s = createCompactorSession({ history: django, limits: { capacity: 1_000 } });
    const r = await s.compact({ mode: 'modelSwitch', previousModel: 'gpt-5.4' });
    expect(r.status).toBe('failed');
    expect(r.message).toMatch(
      /^The model changed from gpt-5\.4 to compactor-offline-v1 and compaction failed: .+\. The turn continues on the full history \(\d+ context items\) with a resume note\.$/,
    );
    expect(r.resumeNote?.role).toBe('user');
    expect(s.history).toHaveLength(django.length);
  });

  it("L4: hierarchical sessions make two summary calls and rebuild as abstract + detail (offline abstract within VT Code's 150-token cap)", async () => {
    const long: Message[] = [agentSession()[0]];
    for (let i = 0; i < 10; i++) long.push(...agentSession(6_000).slice(1));
    const s = createCompactorSession({ history: long, hierarchical: true, limits: { capacity: 32_000 } });
    const r = await s.compact();
    expect(r.status).toBe('compacted');
    expect(r.summaryCalls).toBe(2);
    const texts = s.history.filter(isSummaryMessage).map((m) => textOf(m.content));
    expect(texts[0]).toMatch(/^Earlier context \(abstract\):\n## Goal\n- Fix the failing test in app\.py/);
    expect(
      createEstimator().text(texts[0].replace(/^Earlier context \(abstract\):\n/, '')),
    ).toBeLessThanOrEqual(ABSTRACT_MAX_OUTPUT_TOKENS);
    expect(texts[1]).toMatch(/^Recent context \(summary\):/);
  });

  it('one run at a time: a second turn while one runs is refused and history is unaffected', async () => {
    const s = createCompactorSession({ history: agentSession() });
    const first = s.runTurn();
    await expect(s.runTurn()).rejects.toThrow(/busy/);
    expect(() => s.append(msg.user('late'))).toThrow(/busy/);
    await first;
    expect(s.history).toHaveLength(agentSession().length);
  });
});
