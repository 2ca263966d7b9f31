import { describe, it, expect } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import {
  CLEARED_INPUT_PLACEHOLDER,
  DEFAULT_CLEARING_POLICY,
  MAX_KEPT_INPUT_BYTES,
  clearedResultText,
  isRequestHistoryValid,
  stubResult,
} from '#src/projection/index.js';
import { recallIdOf } from '#src/projection/recall-ids.js';
import {
  clearOldToolResults,
  clearOldToolResultsWithRecentBatches,
} from '#support/projection/vtcode-preset.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { batch, body, call, charsEstimator, deepFreeze, isStub } from '#support/projection/helpers.js';

const est = charsEstimator();
/** Policy that isolates one rule: no count protection unless asked. */
const bare = { keepToolUses: 0, keepRecentToolBatches: 0 };
const keptIds = (out: readonly Message[]) =>
  out.filter((m) => m.role === 'tool' && !isStub(m)).map((m) => m.toolCallId);

/** Batches of 1, 4 and 3 results, each 10,000 tokens: larger than the default evidence window. */
function asymmetric(): Message[] {
  return deepFreeze([
    msg.user('investigate'),
    ...batch(['a1'], 40_000),
    ...batch(['b1', 'b2', 'b3', 'b4'], 40_000),
    ...batch(['c1', 'c2', 'c3'], 40_000),
    msg.assistant('done'),
  ]);
}

describe('clearing: trigger (C1)', () => {
  const h = deepFreeze([msg.user('u'), ...batch(['a'], 4_000), ...batch(['b'], 4_000)]);
  const total = est.history(h);
  const run = (localTrigger: number) =>
    clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger,
      evidenceBudget: 0,
    });

  it('C1: one token below the trigger → unchanged, same array', () => {
    const r = run(total + 1);
    expect(r.messages).toBe(h);
    expect(r.diagnostics.clearingApplied).toBe(false);
    expect(r.diagnostics.reason).toMatch(/below trigger/);
  });
  it('C1: exactly at the trigger → clears', () => {
    const r = run(total);
    expect(r.diagnostics.clearingApplied).toBe(true);
    expect(keptIds(r.messages)).toEqual(['b']);
  });
  it('C1: one token above the trigger → clears', () => {
    expect(run(total - 1).diagnostics.clearedResults).toBe(1);
  });
  it('C1: enabled = false turns clearing off entirely', () => {
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { enabled: false },
      localTrigger: 1,
    });
    expect(r.messages).toBe(h);
    expect(r.diagnostics.reason).toMatch(/clearing off/);
  });
});

describe('clearing: evidence window (C2, C9)', () => {
  // Batches oldest → newest: small(old), BIG, small, small. Budget fits the two newest only.
  const h = deepFreeze([
    msg.user('u'),
    ...batch(['old'], 800),
    ...batch(['big'], 40_000),
    ...batch(['n2'], 800),
    ...batch(['n1'], 800),
  ]);
  it('C2: includes newest complete batches (inputs + results) while within budget, never skipping a batch', () => {
    const cost = (i: number) => est.message(h[i]) + est.message(h[i + 1]);
    const budget = cost(5) + cost(7);
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: bare,
      localTrigger: 1,
      evidenceBudget: budget,
    });
    expect(keptIds(r.messages)).toEqual(['n2', 'n1']);
    expect(r.diagnostics.evidenceBatches).toBe(2);
    expect(r.diagnostics.evidenceTokens).toBe(budget);
    // The old small batch would fit the leftover budget, but the walk stopped at BIG.
    const roomy = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: bare,
      localTrigger: 1,
      evidenceBudget: budget + cost(1),
    });
    expect(keptIds(roomy.messages)).toEqual(['n2', 'n1']);
  });
  it('C2: counts the assistant inputs, not only the results', () => {
    const resultsOnly = est.message(h[6]) + est.message(h[8]);
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: bare,
      localTrigger: 1,
      evidenceBudget: resultsOnly,
    });
    expect(keptIds(r.messages)).toEqual(['n1']);
  });
  it('C9: protected evidence that alone exceeds the budget is kept intact and left to compaction', () => {
    const huge = deepFreeze([msg.user('u'), ...batch(['a'], 4_000), ...batch(['z'], 400_000)]);
    const r = clearOldToolResultsWithRecentBatches(huge, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger: 1_000,
      evidenceBudget: 500,
    });
    expect(r.messages[4]).toBe(huge[4]);
    expect(isStub(r.messages[2])).toBe(true);
    expect(r.diagnostics.projectedTokens).toBeGreaterThan(1_000);
    expect(r.diagnostics.reason).toMatch(
      /newest batch \(\d+ tokens\) alone exceeds the evidence budget; left to compaction/,
    );
  });
});

describe('clearing: count-based retention (C3, C4, C5)', () => {
  it('C3: batches of 1, 4 and 3 results → the default policy protects 7 results', () => {
    const r = clearOldToolResultsWithRecentBatches(asymmetric(), { estimator: est });
    expect(keptIds(r.messages)).toEqual(['b1', 'b2', 'b3', 'b4', 'c1', 'c2', 'c3']);
    expect(r.diagnostics).toMatchObject({ protectedResults: 7, protectedBatches: 2, clearedResults: 1 });
    expect(r.diagnostics.evidenceBatches).toBe(0);
  });
  it('C4: keepRecentToolBatches = 0 → 3 protected; clearOldToolResults is that wrapper', () => {
    const h = asymmetric();
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { keepRecentToolBatches: 0 },
    });
    expect(keptIds(r.messages)).toEqual(['c1', 'c2', 'c3']);
    expect(r.diagnostics.protectedResults).toBe(3);
    expect(clearOldToolResults(h, { estimator: est }).messages).toEqual(r.messages);
  });
  it('C4: with keepRecentToolBatches = 0 the evidence window still applies', () => {
    const h = deepFreeze([
      msg.user('u'),
      ...batch(['a'], 40_000),
      ...batch(['b'], 3_000),
      ...batch(['c'], 3_000),
    ]);
    const r = clearOldToolResults(h, { estimator: est, policy: { keepToolUses: 1 }, localTrigger: 4_000 });
    expect(r.diagnostics.evidenceBudget).toBe(2_000);
    expect(keptIds(r.messages)).toEqual(['b', 'c']);
  });
  it('C3: keepToolUses expands each newest result to its complete originating batch', () => {
    const h = deepFreeze([msg.user('u'), ...batch(['a'], 4_000), ...batch(['b1', 'b2', 'b3'], 4_000)]);
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger: 1,
      evidenceBudget: 0,
    });
    expect(keptIds(r.messages)).toEqual(['b1', 'b2', 'b3']);
  });
  it('C3: "newest" follows originating message order, not completion order', () => {
    // Batch B (older assistant) completes after batch C.
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('b')]),
      msg.assistant('', [call('c')]),
      msg.tool('c', body(4_000)),
      msg.tool('b', body(4_000)),
    ]);
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger: 1,
      evidenceBudget: 0,
    });
    expect(keptIds(r.messages)).toEqual(['c']);
    const r2 = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { keepToolUses: 0, keepRecentToolBatches: 1 },
      localTrigger: 1,
      evidenceBudget: 0,
    });
    expect(keptIds(r2.messages)).toEqual(['c']);
  });
  it('C5: results that match no batch fall back to the count rule alone', () => {
    const orphanOld = deepFreeze([msg.user('u'), msg.tool('x', body(4_000)), ...batch(['a'], 4_000)]);
    const r = clearOldToolResultsWithRecentBatches(orphanOld, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger: 1,
      evidenceBudget: 1_000_000, // covers every batch, but never an unmatched result
    });
    expect(keptIds(r.messages)).toEqual(['a']);
    const orphanNew = deepFreeze([msg.user('u'), ...batch(['a'], 4_000), msg.tool('x', body(4_000))]);
    const r2 = clearOldToolResultsWithRecentBatches(orphanNew, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger: 1,
      evidenceBudget: 0,
    });
    expect(keptIds(r2.messages)).toEqual(['x']);
    expect(r2.diagnostics.protectedResults).toBe(1);
  });
  it('C3/N1: reused ids — protection follows the bound batch, not the id', () => {
    const h = deepFreeze([msg.user('u'), ...batch(['same'], 4_000), ...batch(['same'], 4_000)]);
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger: 1,
      evidenceBudget: 0,
    });
    expect(isStub(r.messages[2])).toBe(true);
    expect(r.messages[4]).toBe(h[4]);
  });
});

describe('clearing: stubs and inputs (C6, C7)', () => {
  const run = (h: readonly Message[], policy = {}) =>
    clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0, ...policy },
      localTrigger: 1,
      evidenceBudget: 0,
    });

  it('C6: the stub is one line of JSON naming the tool, call id, recall id, input and size', () => {
    const h = deepFreeze([msg.user('u'), ...batch(['id-1'], 4_000, 'grep'), ...batch(['k'], 4_000)]);
    const stub = run(h).messages[2];
    const held = { recallId: recallIdOf(h[2]), input: '{}', size: '4000 chars, 1 lines' };
    expect(stub).toEqual({ ...h[2], content: clearedResultText('grep', 'id-1', held) });
    const parsed = JSON.parse(stub.content as string) as Record<string, string>;
    expect(parsed).toMatchObject({ cleared: 'tool_result', tool: 'grep', tool_call_id: 'id-1', input: '{}' });
    expect(parsed.recall_id).toMatch(/^r-[0-9a-f]{8}$/);
    expect(parsed.note).toContain(`recall with id ${parsed.recall_id}`);
    expect(stub.content).not.toContain('\n');
  });
  it('C6: the tool name falls back to the paired call name; non-ASCII names stay valid JSON', () => {
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('ü"1', 'lire_fichier_é')]),
      msg.tool('ü"1', body(4_000)),
      ...batch(['k'], 4_000),
    ]);
    const parsed = JSON.parse(run(h).messages[2].content as string) as Record<string, string>;
    expect(parsed).toMatchObject({ tool: 'lire_fichier_é', tool_call_id: 'ü"1' });
  });
  it('C6: small results stay unchanged — a stub is used only when estimated smaller (non-growth)', () => {
    // The stub names the result's size, so its own size is found by trying the size it comes to.
    const sameSize = (id: string) => {
      let n = 1_000;
      for (let k = 0; k < 3; k++) {
        const stub = stubResult(msg.tool(id, body(n), 'read_file'), 'read_file', '{}');
        n = (est.message(stub) - est.message(msg.tool(id, '', 'read_file'))) * 4;
      }
      return n;
    };
    const h = deepFreeze([
      msg.user('u'),
      ...batch(['s'], 2), // "xx"
      ...batch(['eq'], sameSize('eq')), // same size as its stub
      ...batch(['gt'], sameSize('gt') + 4),
      ...batch(['k'], 4_000),
    ]);
    const r = run(h);
    expect(r.messages[2]).toBe(h[2]);
    expect(r.messages[4]).toBe(h[4]);
    expect(isStub(r.messages[6])).toBe(true);
    expect(r.diagnostics.clearedResults).toBe(1);
    expect(r.diagnostics.projectedTokens).toBeLessThan(r.diagnostics.originalTokens);
  });
  it('C7: inputs of at most 1,024 bytes stay; larger ones become a JSON placeholder; signatures go', () => {
    const at = `"${'a'.repeat(MAX_KEPT_INPUT_BYTES - 2)}"`;
    const over = `"${'é'.repeat(520)}"`; // 520 chars but 1,042 bytes
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [
        call('p', 'write', at, { thoughtSignature: 'sig-p' }),
        call('q', 'write', over, { freeformInput: body(2_000), thoughtSignature: 'sig-q' }),
      ]),
      msg.tool('p', body(4_000)),
      msg.tool('q', body(4_000)),
      msg.assistant('', [call('k', 'write', over, { thoughtSignature: 'sig-k' })]),
      msg.tool('k', body(4_000)),
    ]);
    const r = run(h);
    const [p, q] = r.messages[1].toolCalls!;
    expect(p).toEqual({ id: 'p', name: 'write', arguments: at });
    expect(q).toEqual({
      id: 'q',
      name: 'write',
      arguments: CLEARED_INPUT_PLACEHOLDER,
      freeformInput: CLEARED_INPUT_PLACEHOLDER,
    });
    expect(JSON.parse(q.arguments)).toEqual({ cleared: 'tool_input' });
    expect(r.diagnostics.clearedInputs).toBe(1);
    // Protected call: arguments and signature untouched, same object.
    expect(r.messages[4]).toBe(h[4]);
    expect(h[1].toolCalls![1].thoughtSignature).toBe('sig-q');
  });
  it('C7: clearToolInputs = false keeps large inputs but still drops signatures of cleared calls', () => {
    const big = `"${'a'.repeat(3_000)}"`;
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('p', 'write', big, { thoughtSignature: 'sig' })]),
      msg.tool('p', body(4_000)),
      ...batch(['k'], 4_000),
    ]);
    const r = run(h, { clearToolInputs: false });
    expect(r.messages[1].toolCalls).toEqual([call('p', 'write', big)]);
    expect(r.diagnostics.clearedInputs).toBe(0);
  });
  it('C7: only calls whose result was actually replaced are touched (small results keep their inputs)', () => {
    const big = `"${'a'.repeat(3_000)}"`;
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('small', 'w', big), call('large', 'w', big)]),
      msg.tool('small', 'ok'),
      msg.tool('large', body(4_000)),
      ...batch(['k'], 4_000),
    ]);
    const calls = run(h).messages[1].toolCalls!;
    expect(calls[0]).toBe(h[1].toolCalls![0]);
    expect(calls[1].arguments).toBe(CLEARED_INPUT_PLACEHOLDER);
  });
  it('C7/N1: with a reused id only the exact answered call loses its inputs', () => {
    const big = `"${'a'.repeat(3_000)}"`;
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('same', 'w', big)]),
      msg.tool('same', body(4_000)),
      msg.assistant('', [call('same', 'w', big)]),
      msg.tool('same', body(4_000)),
    ]);
    const r = run(h);
    expect(r.messages[1].toolCalls![0].arguments).toBe(CLEARED_INPUT_PLACEHOLDER);
    expect(r.messages[3]).toBe(h[3]);
  });
  it('C7: input clearing never increases the total estimate', () => {
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('p', 'w', `"${'a'.repeat(1_500)}"`, { thoughtSignature: 's'.repeat(900) })]),
      msg.tool('p', body(4_000)),
      ...batch(['k'], 4_000),
    ]);
    const r = run(h);
    expect(est.message(r.messages[1])).toBeLessThanOrEqual(est.message(h[1]));
    expect(est.history(r.messages)).toBeLessThanOrEqual(est.history(h));
  });
  it('C7: when the placeholder would cost more than the input, the input stays but the signature still goes', () => {
    // A word-and-punctuation counter (a plausible custom estimator) prices the JSON placeholder
    // above a large whitespace-padded input: the "never increases the total" guard is reached.
    const wordsAndPunctuation = createEstimator({
      counter: {
        name: 'chars',
        count: (t) => (t.match(/[{}[\]":,]/g)?.length ?? 0) + (t.match(/[^\s{}[\]":,]+/g)?.length ?? 0),
      },
    });
    const padded = `"${' '.repeat(2_000)}"`;
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('p', 'w', padded, { thoughtSignature: 'sig' })]),
      msg.tool('p', 'line of output '.repeat(500)),
      msg.assistant('', [call('k', 'w', '{}')]),
      msg.tool('k', 'line of output '.repeat(500)),
    ]);
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: wordsAndPunctuation,
      policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
      localTrigger: 1,
      evidenceBudget: 0,
    });
    expect(isStub(r.messages[2])).toBe(true);
    expect(wordsAndPunctuation.text(CLEARED_INPUT_PLACEHOLDER)).toBeGreaterThan(
      wordsAndPunctuation.text(padded),
    );
    expect(r.messages[1].toolCalls).toEqual([call('p', 'w', padded)]);
    expect(r.diagnostics.clearedInputs).toBe(0);
    expect(wordsAndPunctuation.history(r.messages)).toBeLessThanOrEqual(wordsAndPunctuation.history(h));
  });
});

describe('clearing: idempotence, diagnostics, durability (C8, C10)', () => {
  it('C8: applying clearing to its own output changes nothing (same array)', () => {
    for (const policy of [{}, { keepRecentToolBatches: 0 }, { clearToolInputs: false }]) {
      const once = clearOldToolResultsWithRecentBatches(asymmetric(), { estimator: est, policy });
      const twice = clearOldToolResultsWithRecentBatches(once.messages, { estimator: est, policy });
      expect(twice.messages).toBe(once.messages);
      expect(twice.diagnostics.clearedResults).toBe(0);
    }
  });
  it('C10: diagnostics report original/projected tokens, cleared, protected, inputs, trigger and budget', () => {
    const h = asymmetric();
    const r = clearOldToolResultsWithRecentBatches(h, { estimator: est });
    const changed = r.messages.filter((m, i) => m !== h[i]).length;
    expect(r.diagnostics).toMatchObject({
      originalTokens: est.history(h),
      projectedTokens: est.history(r.messages),
      clearedResults: 1,
      protectedBatches: 2,
      protectedResults: 7,
      clearedInputs: 0,
      localTrigger: DEFAULT_CLEARING_POLICY.triggerTokens,
      evidenceBudget: 20_000,
      clearingApplied: true,
    });
    expect(changed).toBe(1);
    expect(r.diagnostics.perTool).toEqual([
      {
        tool: 'read_file',
        cleared: 1,
        kept: 7,
        clearedTokens: est.message(h[2]),
        keptTokens: expect.any(Number),
      },
    ]);
    expect(r.diagnostics.reason).toMatch(/trigger reached/);
  });
  it('C6/C8: durable history is untouched and unchanged messages are reused by identity', () => {
    const h = asymmetric();
    const before = JSON.stringify(h);
    const r = clearOldToolResultsWithRecentBatches(h, { estimator: est });
    expect(JSON.stringify(h)).toBe(before);
    r.messages.forEach((m, i) => {
      if (i !== 2) expect(m).toBe(h[i]);
    });
    expect(isRequestHistoryValid(r.messages)).toBe(true);
  });
});
