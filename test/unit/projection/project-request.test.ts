import { describe, it, expect } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { analyzePairing, isRequestHistoryValid } from '#src/projection/index.js';
import { clearOldToolResults, projectRequest } from '#support/projection/vtcode-preset.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { batch, call, body, charsEstimator, deepFreeze, isStub } from '#support/projection/helpers.js';
import { readmeSession } from '../../fixtures/projection/readme-session.js';

const est = charsEstimator();
const keptIds = (out: readonly Message[]) =>
  out.filter((m) => m.role === 'tool' && !isStub(m)).map((m) => m.toolCallId);
const readmeIds = (out: readonly Message[]) => keptIds(out).filter((id) => id?.startsWith('readme-'));
const ALL_READMES = ['readme-0', 'readme-1', 'readme-2', 'readme-3', 'readme-4', 'readme-5'];

describe('projectRequest', () => {
  const history = deepFreeze([
    msg.user('u'),
    ...batch(['a'], 40_000),
    msg.assistant('', [call('b'), call('c')]),
    msg.system('reminder between a batch and its results'),
    msg.tool('c', body(40_000)),
    msg.tool('b', body(40_000)),
    ...batch(['d'], 40_000),
  ]);

  it('H1/N4/C3: normalizes first, then clears against the resolved budgets', () => {
    const policy = { keepToolUses: 1, keepRecentToolBatches: 0 };
    const r = projectRequest(history, { limits: {}, estimator: est, policy });
    expect(isRequestHistoryValid(r.messages)).toBe(true);
    expect(r.messages[6].role).toBe('system');
    expect(keptIds(r.messages)).toEqual(['d']);
    expect(r.budgets.localTrigger).toBe(40_000);
    expect(r.diagnostics.originalTokens).toBe(est.history(history));
    expect(r.diagnostics.projectedTokens).toBe(est.history(r.messages));
  });

  it('B3: the local trigger comes from the capacity when that is lower than the configured trigger', () => {
    const small = deepFreeze([
      msg.user('u'),
      ...batch(['a'], 8_000),
      ...batch(['b'], 8_000),
      ...batch(['c'], 8_000),
    ]);
    const total = est.history(small);
    expect(total).toBeLessThan(40_000);
    const limits = { capacity: 12_000, reservedOutput: 1_000, prefixTokens: 1_000 };
    const r = projectRequest(small, { limits, estimator: est });
    expect(r.budgets.localTrigger).toBe(6_000);
    expect(r.diagnostics.clearingApplied).toBe(true);
    expect(keptIds(r.messages)).toEqual(['b', 'c']);
    expect(projectRequest(small, { limits: {}, estimator: est }).messages).toBe(small);
  });

  it('B3: limits.trigger wins over policy.triggerTokens; the lower of it and the cap applies', () => {
    const r = projectRequest(history, {
      limits: { trigger: 500 },
      policy: { triggerTokens: 1e9 },
      estimator: est,
    });
    expect(r.budgets.localTrigger).toBe(500);
    const p = projectRequest(history, { limits: {}, policy: { triggerTokens: 1e9 }, estimator: est });
    expect(p.diagnostics.clearingApplied).toBe(false);
  });

  it('C11: interactive requests carrying Anthropic native context edits skip local clearing', () => {
    const r = projectRequest(history, {
      limits: {},
      estimator: est,
      interactive: true,
      nativeContextEdits: true,
    });
    expect(r.diagnostics.clearedResults).toBe(0);
    expect(r.diagnostics.reason).toMatch(/native context edits/);
    expect(isRequestHistoryValid(r.messages)).toBe(true);
  });

  it('C11: headless requests always clear, even when the provider supports native edits', () => {
    const headless = projectRequest(history, { limits: {}, estimator: est, nativeContextEdits: true });
    expect(headless.diagnostics.clearedResults).toBeGreaterThan(0);
    const interactive = projectRequest(history, { limits: {}, estimator: est, interactive: true });
    expect(interactive.diagnostics.clearedResults).toBe(headless.diagnostics.clearedResults);
  });

  it('T2/C8: a warm re-projection reuses every message object, so the estimator never re-estimates', () => {
    const session = readmeSession({ shape: 'sequential', searches: 60 });
    const e = createEstimator({ encoding: 'chars' });
    const first = projectRequest(session, { limits: {}, estimator: e });
    expect(first.diagnostics.clearedResults).toBeGreaterThan(0);
    const misses = e.stats().messageMisses;
    const grown = [...session, msg.user('next question')];
    const second = projectRequest(grown, { limits: {}, estimator: e });
    expect(e.stats().messageMisses).toBe(misses + 1);
    second.messages.slice(0, -1).forEach((m, i) => expect(m).toBe(first.messages[i]));
  });

  it('R1: the durable history is never modified (deep-frozen input, identical JSON)', () => {
    const before = JSON.stringify(history);
    projectRequest(history, { limits: { capacity: 10_000 }, estimator: est });
    expect(JSON.stringify(history)).toBe(before);
  });
});

describe('displaced README pages (the §13 regression)', () => {
  for (const shape of ['parallel', 'sequential'] as const) {
    it(`C2: ${shape} — with the default policy all six READMEs survive the later searches`, () => {
      const session = deepFreeze(readmeSession({ shape }));
      const prefixTokens = est.message(session[0]);
      const limits = { capacity: 128_000, reservedOutput: 4_096, prefixTokens };
      for (const keepRecentToolBatches of [0, 2]) {
        const r = projectRequest(session, { limits, estimator: est, policy: { keepRecentToolBatches } });
        expect(r.diagnostics.clearingApplied).toBe(true);
        expect(readmeIds(r.messages)).toEqual(ALL_READMES);
        // The README results are replayed byte for byte (same objects), their calls untouched.
        for (const m of r.messages.filter((x) => x.toolCallId?.startsWith('readme-')))
          expect(session).toContain(m);
        expect(keptIds(r.messages).filter((id) => id?.startsWith('explore-'))).toEqual([]);
        expect(r.diagnostics.projectedTokens).toBeLessThan(r.diagnostics.localTrigger);
      }
    });

    it(`C3/C4: ${shape} — without the evidence window (count rule only) the READMEs are displaced`, () => {
      const session = deepFreeze(readmeSession({ shape }));
      for (const keepRecentToolBatches of [0, 2]) {
        const r = clearOldToolResults(session, {
          estimator: est,
          policy: { keepRecentToolBatches },
          evidenceBudget: 0,
        });
        expect(readmeIds(r.messages)).toEqual([]);
      }
    });
  }

  it('C2: sequential — with many searches exactly the READMEs that fit the evidence window stay', () => {
    const session = deepFreeze(readmeSession({ shape: 'sequential', searches: 40 }));
    // Independent walk: complete batches newest-first while the total stays within 20,000.
    const pairing = analyzePairing(session);
    const fitting: string[] = [];
    let running = 0;
    for (const b of [...pairing.batches].reverse()) {
      const cost = [b.assistantIndex, ...b.resultIndices].reduce((n, i) => n + est.message(session[i]), 0);
      if (running + cost > 20_000) break;
      running += cost;
      for (const i of b.resultIndices) fitting.push(session[i].toolCallId!);
    }
    const expected = ALL_READMES.filter((id) => fitting.includes(id));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(6);
    for (const keepRecentToolBatches of [0, 2]) {
      const r = projectRequest(session, { limits: {}, estimator: est, policy: { keepRecentToolBatches } });
      expect(readmeIds(r.messages)).toEqual(expected);
    }
  });

  it('C2: parallel — the README batch is kept or cleared as a whole, never split', () => {
    const session = deepFreeze(readmeSession({ shape: 'parallel', searches: 45 }));
    const r = projectRequest(session, { limits: {}, estimator: est });
    expect(readmeIds(r.messages)).toEqual([]);
    expect(r.diagnostics.evidenceTokens).toBeLessThanOrEqual(20_000);
    const fits = projectRequest(readmeSession({ shape: 'parallel', searches: 15 }), {
      limits: {},
      estimator: est,
    });
    expect(readmeIds(fits.messages)).toEqual(ALL_READMES);
  });
});
