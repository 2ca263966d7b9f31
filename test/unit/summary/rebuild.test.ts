import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg, textOf } from '#src/messages/message.js';
import { ContextCapacityError, EmptySummaryError, ProviderError } from '#src/core/errors.js';
import {
  collectRetainedMessages,
  isProtocolValid,
  rebuildHistory,
  requireSummaryText,
  splitContinuityTail,
  summaryFailure,
  SUMMARY_PREFIX,
  validateSummary,
  summarySections,
} from '#src/summary/index.js';
import { answerRecall, recallIdOf } from '#src/projection/index.js';
import { session, turn } from '#support/summary/helpers.js';

afterAll(freeEncoders);
const est = createEstimator();

describe('L7 rebuildHistory', () => {
  it('L7: summary user message first, then retained messages, then a tail of whole groups', () => {
    const h = session(8, 2, 2, 200);
    const tailTarget = est.history(turn('t7', 2, 2, 200)) + est.history(turn('t6', 2, 2, 200)) + 5;
    const r = rebuildHistory(h, '## Goal\n- do it', {
      estimator: est,
      continuityTailTokens: tailTarget,
      capacity: null,
    });
    expect(r.history[0].role).toBe('user');
    expect(textOf(r.history[0].content)).toBe(`${SUMMARY_PREFIX}## Goal\n- do it`);
    const tail = r.history.slice(r.history.length - r.tailCount);
    expect(textOf(tail[0].content)).toBe('task t6: please look at things');
    expect(tail).toEqual([...h.slice(h.length - tail.length)]);
    expect(r.retainedCount).toBeGreaterThan(0);
    expect(r.retainedCount).toBeLessThanOrEqual(4);
    expect(isProtocolValid(r.history)).toBe(true);
  });

  it('L7: a newest group bigger than the tail keeps its anchor and newest whole batches (never split)', () => {
    const h = turn('big', 30, 3, 300);
    const split = splitContinuityTail(h, 2_000, est);
    expect(split.tail[0]).toBe(h[0]);
    expect(est.history(split.tail)).toBeLessThanOrEqual(2_000);
    expect(isProtocolValid(split.tail)).toBe(true);
    expect(split.tail[split.tail.length - 1]).toBe(h[h.length - 1]);
  });

  it('L7: output is bounded to the context and the summary always survives', () => {
    const h = session(12, 3, 2, 1500);
    const capacity = 8_000;
    const r = rebuildHistory(h, 'S '.repeat(6000), {
      estimator: est,
      continuityTailTokens: 1_280,
      capacity,
      reservedOutput: 1_000,
    });
    expect(r.budget).toBe(Math.min(capacity - 1000 - 512, capacity - 1_000));
    expect(r.tokens).toBeLessThanOrEqual(r.budget!);
    expect(r.fits).toBe(true);
    expect(textOf(r.history[0].content).startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(isProtocolValid(r.history)).toBe(true);
  });

  it('L6: never an empty "Previous conversation summary"', () => {
    expect(() =>
      rebuildHistory(session(1), '  \n', { estimator: est, continuityTailTokens: 1024, capacity: null }),
    ).toThrow(EmptySummaryError);
  });

  it('L7 retention: error and correction messages outrank plain ones; at most maxMessages', () => {
    const h = [
      msg.user('hello there'),
      msg.user('the build is broken with an error'),
      msg.user("no, don't touch the tests"),
      msg.user('ok'),
      msg.user('thanks'),
    ];
    const kept = collectRetainedMessages(h, { maxMessages: 2, maxTokens: 1000, estimator: est });
    expect(kept.map((m) => textOf(m.content))).toEqual([
      'the build is broken with an error',
      "no, don't touch the tests",
    ]);
    expect(collectRetainedMessages(h, { maxMessages: 0, maxTokens: 1000, estimator: est })).toEqual([]);
  });

  it('L7 retention: a user message cut to the room left keeps its start and names the whole one by recall id; a cut of that cut still names the original', () => {
    const long = msg.user(
      Array.from({ length: 400 }, (_, i) => `step ${i}: run the reproduction script`).join('\n'),
    );
    const [cut] = collectRetainedMessages([long], { maxMessages: 4, maxTokens: 300, estimator: est });
    const text = textOf(cut.content);
    expect(est.message(cut)).toBeLessThanOrEqual(300);
    expect(text.startsWith('step 0: run the reproduction script\nstep 1:')).toBe(true);
    const id = recallIdOf(long);
    expect(text).toMatch(
      new RegExp(
        `about ${est.message(long).toLocaleString('en-US')} tokens, .* only its start is shown\\. .*recall with id ${id} returns it\\.\\]$`,
      ),
    );
    expect(answerRecall([long], { id })).toEqual({ found: true, text: textOf(long.content) });
    const [again] = collectRetainedMessages([cut], { maxMessages: 4, maxTokens: 200, estimator: est });
    expect(est.message(again)).toBeLessThanOrEqual(200);
    expect(textOf(again.content).match(/r-[0-9a-f]{8}/g)).toEqual([id]);
  });
});

describe('L6 diagnostics', () => {
  it('L6: empty summary fails with exactly "provider returned an empty summary" and carries the route', () => {
    try {
      requireSummaryText(
        { text: ' ', finishReason: 'stop' },
        { provider: 'p', model: 'm', inputTokens: 10, budget: 20 },
      );
      throw new Error('not thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(EmptySummaryError);
      expect((e as EmptySummaryError).message).toBe('provider returned an empty summary');
      expect((e as EmptySummaryError).info).toMatchObject({
        provider: 'p',
        model: 'm',
        inputTokens: 10,
        budget: 20,
      });
    }
  });

  it('L6: provider failures carry provider / model, input_tokens and budget; capacity errors stay classifiable', () => {
    const cause = new ContextCapacityError('prompt is too long', { provider: 'p', model: 'm', status: 400 });
    const e = summaryFailure(cause, { provider: 'p', model: 'm', inputTokens: 1234, budget: null });
    expect(e).toBeInstanceOf(ContextCapacityError);
    expect(e.message).toBe(
      'Failed to generate compaction summary for p / m (input_tokens=1234, budget=unknown): prompt is too long',
    );
    const other = summaryFailure(new Error('x'.repeat(1000)), {
      provider: 'p',
      model: 'm',
      inputTokens: 1,
      budget: 9,
      kind: 'detail',
    });
    expect(other).toBeInstanceOf(ProviderError);
    expect(
      other.message.startsWith('Failed to generate detail summary for p / m (input_tokens=1, budget=9)'),
    ).toBe(true);
    expect(other.message.length).toBeLessThan(450);
  });
});

describe('§14 validateSummary', () => {
  const good = summarySections()
    .map((s, i) => `## ${s}\n- ${i === 0 ? 'fix the bug' : '(none)'}`)
    .join('\n\n');
  const opts = { inputTokens: 10_000, estimator: est };

  it('§14: accepts a templated, non-empty, complete summary smaller than its input', () => {
    expect(validateSummary({ text: good, finishReason: 'stop' }, opts)).toEqual({ ok: true });
  });

  it('§14: rejects empty, truncated, template-less, template-only and larger-than-input summaries', () => {
    expect(validateSummary({ text: '', finishReason: 'stop' }, opts)).toMatchObject({
      ok: false,
      check: 'empty',
      message: 'provider returned an empty summary',
    });
    expect(validateSummary({ text: good, finishReason: 'length' }, opts)).toMatchObject({
      ok: false,
      check: 'truncated',
    });
    expect(
      validateSummary({ text: 'The user wanted things. I did them.', finishReason: 'stop' }, opts),
    ).toMatchObject({ ok: false, check: 'template' });
    const allNone = summarySections()
      .map((s) => `## ${s}\n- (none)`)
      .join('\n');
    expect(validateSummary({ text: allNone, finishReason: 'stop' }, opts)).toMatchObject({
      ok: false,
      check: 'template',
      message: 'summary has only empty template sections',
    });
    expect(validateSummary({ text: good, finishReason: 'stop' }, { ...opts, inputTokens: 20 })).toMatchObject(
      { ok: false, check: 'larger-than-input' },
    );
  });

  it('§14: headings may be bold or colon-style when the caller names the sections', () => {
    const text = '**Goal:** ship\nFailed:\n- pytest exit 1';
    expect(
      validateSummary({ text, finishReason: 'stop' }, { ...opts, requiredSections: ['Goal', 'Failed'] }),
    ).toEqual({ ok: true });
  });
});
