import { describe, it, expect } from '@jest/globals';
import { msg } from '#src/messages/message.js';
import {
  evidenceItems,
  findEvidenceNeeds,
  indexResults,
  isPresent,
  isReadOrSearch,
} from '#dev/replay/evidence.js';

const read = (id: string, path: string) => ({ id, name: 'read_file', arguments: JSON.stringify({ path }) });

describe('evidence items (§14 retention quality)', () => {
  it('§14: extracts paths, camelCase/snake_case identifiers ≥ 6 chars, code lines and error lines', () => {
    const items = evidenceItems(
      'see src/parser/lexer.ts and parseToken, max_depth, short_x, plain words\n  return parseToken(input);\nValueError: bad token in stream',
    );
    expect(items.has('path:src/parser/lexer.ts')).toBe(true);
    expect(items.has('identifier:parseToken')).toBe(true);
    expect(items.has('identifier:max_depth')).toBe(true);
    expect(items.has('identifier:short_x')).toBe(true);
    expect(items.has('identifier:plain')).toBe(false);
    expect(items.has('identifier:words')).toBe(false);
    expect(items.has('code-line:return parseToken(input);')).toBe(true);
    expect(items.has('error-line:ValueError: bad token in stream')).toBe(true);
  });
  it('§14: short lines, bare file names and plain lowercase words are not items', () => {
    const items = evidenceItems('x = 1;\nsetup.py\nanother');
    expect([...items]).toEqual([]);
  });
});

describe('findEvidenceNeeds (§14)', () => {
  it('§14: an identifier only a result showed makes that result needed at the turn that uses it', () => {
    const s = [
      msg.user('Fix the bug.'),
      msg.assistant('', [read('a', 'src/x.py')]),
      msg.tool('a', 'def compute_total(items):\n    pass', 'read_file'),
      msg.assistant('I will change compute_total now.'),
    ];
    expect(findEvidenceNeeds(s).get(3)).toEqual([
      { result: 2, reasons: ['identifier'], facts: ['compute_total'] },
    ]);
  });
  it('§14: items the user or an earlier assistant message already said are not evidence', () => {
    const s = [
      msg.user('Fix compute_total.'),
      msg.assistant('', [read('a', 'src/x.py')]),
      msg.tool('a', 'def compute_total(items): pass\ndef render_rows(rows): pass', 'read_file'),
      msg.assistant('Look at render_rows.'),
      msg.assistant('Now compute_total and render_rows.'),
    ];
    const needs = findEvidenceNeeds(s);
    expect(needs.get(3)).toEqual([{ result: 2, reasons: ['identifier'], facts: ['render_rows'] }]);
    expect(needs.has(4)).toBe(false);
  });
  it('§14: when several results showed the item, the newest one is needed', () => {
    const s = [
      msg.user('Go.'),
      msg.assistant('', [read('a', 'src/x.py')]),
      msg.tool('a', 'load_config()', 'read_file'),
      msg.assistant('', [read('b', 'src/y.py')]),
      msg.tool('b', 'also load_config here', 'read_file'),
      msg.assistant('Call load_config.'),
    ];
    expect(findEvidenceNeeds(s).get(5)).toEqual([
      { result: 4, reasons: ['identifier'], facts: ['load_config'] },
    ]);
  });
  it('§14: re-running the same read (same tool, same arguments, any key order) needs the newest earlier result', () => {
    const s = [
      msg.user('Go.'),
      msg.assistant('', [{ id: 'a', name: 'view', arguments: '{"path":"a.txt","line":1}' }]),
      msg.tool('a', 'hello', 'view'),
      msg.assistant('', [{ id: 'b', name: 'view', arguments: '{"line":1,"path":"a.txt"}' }]),
    ];
    expect(findEvidenceNeeds(s).get(3)).toEqual([{ result: 2, reasons: ['re-run'], facts: [] }]);
  });
  it('§14: re-running a non-read command (tests) is not a need', () => {
    const run = { id: 'a', name: 'bash', arguments: '{"command":"pytest -q"}' };
    expect(isReadOrSearch(run)).toBe(false);
    expect(isReadOrSearch({ id: 'b', name: 'bash', arguments: '{"command":"grep -rn foo src"}' })).toBe(true);
    const s = [
      msg.user('Go.'),
      msg.assistant('', [run]),
      msg.tool('a', 'ok', 'bash'),
      msg.assistant('', [{ ...run, id: 'b' }]),
    ];
    expect(findEvidenceNeeds(s).has(3)).toBe(false);
  });
  it('§14: a result is present only with the same call id and identical text', () => {
    const result = msg.tool('a', 'def compute_total(): pass', 'read_file');
    expect(isPresent(result, indexResults([result]))).toBe(true);
    expect(isPresent(result, indexResults([{ ...result, content: '[cleared]' }]))).toBe(false);
    expect(isPresent(result, indexResults([{ ...result, toolCallId: 'b' }]))).toBe(false);
  });
});
