import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { RECALL_TOOL, answerRecall, recallIdOf } from '#src/projection/index.js';
import { clearOldToolResultsWithRecentBatches } from '#support/projection/vtcode-preset.js';
import { batch, body, call, charsEstimator, deepFreeze, isStub } from '#support/projection/helpers.js';

const est = charsEstimator();
const clear = (h: readonly Message[]) =>
  clearOldToolResultsWithRecentBatches(h, {
    estimator: est,
    policy: { keepToolUses: 1, keepRecentToolBatches: 0 },
    localTrigger: 1,
    evidenceBudget: 0,
  }).messages;
const lines = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag} line ${i + 1}`).join('\n');

describe('recall ids', () => {
  it('the same result gets the same id on every run; another call id or content gets another', () => {
    const a = msg.tool('c1', 'hello', 'read_file');
    expect(recallIdOf(a)).toMatch(/^r-[0-9a-f]{8}$/);
    expect(recallIdOf({ ...a })).toBe(recallIdOf(a));
    expect(recallIdOf(msg.tool('c2', 'hello', 'read_file'))).not.toBe(recallIdOf(a));
    expect(recallIdOf(msg.tool('c1', 'hello!', 'read_file'))).not.toBe(recallIdOf(a));
  });

  it('a thousand results of one session get a thousand different ids', () => {
    const ids = new Set(
      Array.from({ length: 1_000 }, (_, i) => recallIdOf(msg.tool(`c${i}`, `out ${i % 7}`))),
    );
    expect(ids.size).toBe(1_000);
  });

  it('C6/C8: a cleared result names its id, call input and size; clearing again sends the same bytes', () => {
    const h = deepFreeze([
      msg.user('u'),
      msg.assistant('', [call('a', 'read_file', '{"path":"src/a.ts"}')]),
      msg.tool('a', lines(300, 'alpha'), 'read_file'),
      ...batch(['k'], 4_000),
    ]);
    const once = clear(h);
    expect(isStub(once[2])).toBe(true);
    const stub = JSON.parse(once[2].content as string) as Record<string, string>;
    expect(stub).toMatchObject({
      recall_id: recallIdOf(h[2]),
      tool: 'read_file',
      input: '{"path":"src/a.ts"}',
      size: `${(h[2].content as string).length} chars, 300 lines`,
    });
    // Fresh copies of the same history (the next request of a proxy) clear to the same bytes.
    const again = clear(JSON.parse(JSON.stringify(h)) as Message[]);
    expect(again[2].content).toBe(once[2].content);
    expect(clear(once)[2]).toBe(once[2]);
  });

  it('a recall result outlives a few newer batches before it may be cleared', () => {
    const recalled = (after: number) =>
      deepFreeze([
        msg.user('u'),
        msg.assistant('', [call('r', 'recall', '{"id":"r-00000000"}')]),
        msg.tool('r', body(4_000), 'recall'),
        ...Array.from({ length: after }, (_, i) => batch([`k${i}`], 4_000)).flat(),
      ]);
    expect(isStub(clear(recalled(2))[2])).toBe(false);
    expect(isStub(clear(recalled(3))[2])).toBe(true);
  });
});

describe('answering recall', () => {
  const original = msg.tool('a', lines(50, 'alpha'), 'read_file');
  const history = [msg.user('u'), msg.assistant('', [call('a')]), original, ...batch(['k'], 4_000)];
  const request = clear(history);
  const id = recallIdOf(original);

  it('returns the original whole, or the lines asked for', () => {
    expect(answerRecall(history, { id }, request)).toEqual({ text: original.content, found: true });
    const part = answerRecall(history, JSON.stringify({ id, range: { start: 3, end: 4 } }), request);
    expect(part.text).toBe(`lines 3-4 of 50 of ${id}:\nalpha line 3\nalpha line 4`);
  });

  it('points at a copy already in the request instead of sending it again', () => {
    const given = answerRecall(history, { id }, request);
    const withCopy = [
      ...request,
      msg.assistant('', [call('q', 'recall', JSON.stringify({ id }))]),
      msg.tool('q', given.text, 'recall'),
    ];
    const again = answerRecall(history, { id }, withCopy);
    expect(again.found).toBe(true);
    expect(again.text).toMatch(/already in this conversation.*call q/);
    expect(answerRecall(history, { id }, history).text).toMatch(/already in this conversation.*call a/);
  });

  it('bad arguments and unknown ids get one line the model can read', () => {
    expect(answerRecall(history, 'not json').text).toBe('recall: the arguments are not JSON');
    expect(answerRecall(history, { id: 'x' }).text).toMatch(/is not a recall id/);
    expect(answerRecall(history, { id: 'r-00000000' })).toEqual({
      text: 'recall: no tool result with id r-00000000 in this session',
      found: false,
    });
    expect(answerRecall(history, { id, range: { start: 5, end: 2 } }).text).toMatch(/range/);
  });

  it('the tool definition is one fixed set of bytes', () => {
    expect(JSON.stringify(RECALL_TOOL)).toBe(JSON.stringify(RECALL_TOOL));
    expect(Object.isFrozen(RECALL_TOOL)).toBe(true);
    expect(RECALL_TOOL.name).toBe('recall');
  });
});
