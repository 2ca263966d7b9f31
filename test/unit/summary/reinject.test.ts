import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { applyReinjection, buildReinjection, rebuildHistory } from '#src/summary/index.js';

afterAll(freeEncoders);
const est = createEstimator();
const call = (id: string, name: string, args: object) => ({ id, name, arguments: JSON.stringify(args) });

const history: Message[] = [
  msg.system('SYSTEM: follow AGENTS.md'),
  msg.user('work on a.py and b.py'),
  msg.assistant('', [call('1', 'Read', { file_path: 'a.py' })]),
  msg.tool('1', 'A-OLD', 'Read'),
  msg.assistant('', [call('2', 'Write', { file_path: 'b.py', content: 'B-NEW' })]),
  msg.tool('2', 'ok', 'Write', { metadata: { isError: false } }),
  msg.assistant('', [call('3', 'Edit', { file_path: 'a.py', old_string: 'x', new_string: 'y' })]),
  msg.tool('3', 'ok', 'Edit', { metadata: { isError: false } }),
  msg.assistant('', [call('4', 'Read', { file_path: 'c.py' })]),
  msg.tool('4', 'C-CONTENT '.repeat(400), 'Read'),
  msg.assistant('', [call('5', 'Write', { file_path: 'd.py', content: 'D' })]),
  msg.tool('5', '<tool_use_error>File has not been read yet.</tool_use_error>', 'Write', {
    metadata: { isError: true },
  }),
];

describe('§14 post-compaction re-injection', () => {
  it('§14: re-injects the system prompt and the latest contents of recently touched files, newest first', () => {
    const r = buildReinjection(history, { budgetTokens: 5_000, estimator: est });
    expect(r.system).toEqual([history[0]]);
    // c.py (newest read) before b.py (write args); a.py's newest touch is a partial edit,
    // so its older read is stale and is not re-injected; d.py's write failed.
    expect(r.included.map((f) => f.path)).toEqual(['c.py', 'b.py']);
    const text = textOf(r.files[0].content);
    expect(text.indexOf('### c.py')).toBeLessThan(text.indexOf('### b.py'));
    expect(text).toContain('B-NEW');
    expect(text).not.toContain('A-OLD');
    expect(r.tokens).toBeLessThanOrEqual(5_000);
  });

  it('§14: stays within a small budget by previewing the first file that does not fit and stopping', () => {
    const r = buildReinjection(history, { budgetTokens: 600, estimator: est });
    expect(r.tokens).toBeLessThanOrEqual(600);
    expect(r.included).toEqual([{ path: 'c.py', source: 'read', truncated: true }]);
    const none = buildReinjection(history, { budgetTokens: 20, estimator: est });
    expect(none.tokens).toBeLessThanOrEqual(20);
    expect(none.files).toEqual([]);
  });

  it('§14: applyReinjection puts system first and files right after the summary', () => {
    const rebuilt = rebuildHistory(history, '## Goal\n- x', {
      estimator: est,
      continuityTailTokens: 1024,
      capacity: null,
    });
    const r = buildReinjection(history, { budgetTokens: 5_000, estimator: est });
    const out = applyReinjection(rebuilt.history, r);
    expect(out[0]).toBe(history[0]);
    expect(textOf(out[1].content).startsWith('Previous conversation summary:')).toBe(true);
    expect(out[2]).toBe(r.files[0]);
  });

  it('§14: a call reads the last result with its id anywhere in the history, also one recorded before the call', () => {
    const early: Message[] = [
      msg.user('read e.py'),
      msg.tool('7', 'E-EARLY', 'Read'),
      msg.assistant('', [call('7', 'Read', { file_path: 'e.py' })]),
      msg.assistant('', [call('8', 'Read', { file_path: 'f.py' })]),
      msg.tool('8', 'F-FIRST', 'Read'),
      msg.tool('8', 'F-LAST', 'Read'),
    ];
    const r = buildReinjection(early, { budgetTokens: 5_000, estimator: est, includeSystem: false });
    expect(r.included.map((f) => f.path)).toEqual(['f.py', 'e.py']);
    const text = textOf(r.files[0].content);
    expect(text).toContain('E-EARLY');
    expect(text).toContain('F-LAST');
    expect(text).not.toContain('F-FIRST');
  });
});
