import { describe, expect, it } from '@jest/globals';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { answerSpan, withSpanIndex, type SpanIndex } from '#src/projection/recall-spans.js';
import { isRecallPointer, stubResult } from '#src/projection/stubs.js';
import {
  amendHistory,
  checkReceipt,
  extractReceiptItems,
  replacedSpan,
  type ReceiptItem,
} from '#src/summary/receipt.js';
import { summaryMessage } from '#src/summary/rebuild.js';

const span = [
  msg.user('Rename the flag to --dry-run; ticket #4821.'),
  msg.assistant('', [{ id: 'c1', name: 'bash', arguments: JSON.stringify({ command: 'make build' }) }]),
  msg.tool('c1', 'error: missing target\nexit code 2', 'bash'),
];

describe('receipt items and where they land (R3)', () => {
  it('R3: extraction is deterministic and names the request, the failed command and the id', () => {
    const items = extractReceiptItems(span);
    expect(extractReceiptItems(span)).toEqual(items);
    expect(items.map((i) => [i.kind, i.key])).toEqual(
      expect.arrayContaining([
        ['request', 'Rename the flag to --dry-run; ticket #4821.'],
        ['error', 'make build'],
        ['id', '#4821'],
      ]),
    );
  });

  it('R3: an item lands in a kept message, the summary, a pointer line, or is missing', () => {
    const items: ReceiptItem[] = ['kept-key', 'summary-key', 'pointer-key', 'lost-key'].map((key) => ({
      kind: 'path',
      key,
      line: `- Path touched: ${key}`,
    }));
    const after = [
      summaryMessage('## Files\n- summary-key'),
      msg.user('see kept-key'),
      msg.tool('c9', '[cleared: recall id r-1 held pointer-key]', 'bash'),
    ];
    const places = checkReceipt(items, after, { isPointer: (line) => line.includes('recall id') });
    expect(places.map((p) => p.place)).toEqual(['kept', 'summary', 'pointer', 'missing']);
    const amended = amendHistory(after, [items[3]!]);
    expect(amended[0]!.content).toContain('## Kept verbatim\n- Path touched: lost-key');
    expect(checkReceipt(items, amended).map((p) => p.place)).toEqual(['kept', 'summary', 'kept', 'summary']);
  });

  it('R3: the replaced span is what the compacted history no longer holds', () => {
    expect(replacedSpan(span, [summaryMessage('s'), span[2]!])).toEqual(span.slice(0, 2));
  });
});

describe('receipt pointers: a cleared result that names a recall id (R3)', () => {
  it('R3: an item whose only copy is a clearing stub with a recall id is a pointer, not kept', () => {
    const call = JSON.stringify({ command: 'cat src/deep/module.ts' });
    const read = [
      msg.user('Look at the module.'),
      msg.assistant('', [{ id: 'c9', name: 'bash', arguments: call }]),
      msg.tool('c9', 'export const deep = 1;\n'.repeat(40), 'bash'),
    ];
    const items = extractReceiptItems(read).filter((i) => i.kind === 'path');
    expect(items.map((i) => i.key)).toEqual(['src/deep/module.ts']);
    // The compacted history keeps the call's result only as a stub naming its recall id.
    const stub = stubResult(read[2], 'bash', 'src/deep/module.ts');
    expect(textOf(stub.content)).toMatch(/"recall_id":"r-[0-9a-f]{8}"/);
    const after = [summaryMessage('## Goal\n- Look at the module.'), msg.user('next'), stub];
    expect(checkReceipt(items, after, { isPointer: isRecallPointer }).map((e) => e.place)).toEqual([
      'pointer',
    ]);
    // Without the hook the stub's preview would count as a kept copy.
    expect(checkReceipt(items, after).map((e) => e.place)).toEqual(['kept']);
    // Other lines are not pointers: a shortened result's own text, a plain message.
    expect(isRecallPointer('export const deep = 1;')).toBe(false);
    expect(isRecallPointer('{"cleared":"tool_result","tool":"bash"}')).toBe(false);
  });
});

describe("receipt span lists: a line of the list a summary's span id returns (R3)", () => {
  const older: SpanIndex = {
    id: 's-00000001',
    results: [{ id: 'r-0000000a', line: 'bash: cat src/old/first.ts (120 chars, 4 lines)' }],
    earlier: [],
  };
  const index: SpanIndex = {
    id: 's-00000002',
    results: [
      { id: 'r-0000000b', line: "bash: sed -i 's/a/b/' src/deep/module.ts → exit 0 (0 chars, 0 lines)" },
    ],
    earlier: ['s-00000001'],
  };
  const spanLine = '- s-00000002 lists every result replaced here (1) and by the summaries before it.';
  const items: ReceiptItem[] = [
    { kind: 'command', key: "sed -i 's/a/b/' src/deep/module.ts", line: '- Ran …' },
    { kind: 'path', key: 'src/old/first.ts', line: '- Path touched: src/old/first.ts' },
    { kind: 'path', key: 'src/nowhere.ts', line: '- Path touched: src/nowhere.ts' },
    // Said nowhere else: a request or an error must be in words, never only in a list.
    { kind: 'error', key: "sed -i 's/a/b/' src/deep/module.ts", line: '- Unresolved …' },
  ];
  const summary = (text: string, withIndex: boolean): Message[] => {
    const m = summaryMessage(`## Goal\n- Rename.\n\n## Recall ids\n${text}`);
    // The earlier summary's list is reached only through the newer span's.
    const earlier = withSpanIndex(summaryMessage('## Goal\n- Start.'), older);
    return withIndex ? [earlier, withSpanIndex(m, index)] : [m];
  };

  it('R3: a path or command on a line of the named span (or a span it replaced) lands there, with both ids', () => {
    const after = summary(spanLine, true);
    const places = checkReceipt(items, after);
    expect(places.map((p) => [p.place, p.recall])).toEqual([
      ['span', { id: 'r-0000000b', span: 's-00000002' }],
      ['span', { id: 'r-0000000a', span: 's-00000002' }],
      ['missing', undefined],
      ['missing', undefined],
    ]);
    // The list the span id returns holds the line with the item and its recall id.
    expect(answerSpan(after, 's-00000002')).toContain(`r-0000000a ${older.results[0]!.line}`);
  });

  it('R3: a span the summary does not name, or whose list the history lacks, holds nothing', () => {
    expect(checkReceipt(items, summary('- (no span line)', true)).map((p) => p.place)).toEqual([
      'missing',
      'missing',
      'missing',
      'missing',
    ]);
    expect(checkReceipt(items, summary(spanLine, false)).map((p) => p.place)).toEqual([
      'missing',
      'missing',
      'missing',
      'missing',
    ]);
  });

  it('R3: a line the summary shows wins over the list, and names its recall id', () => {
    const after = summary(
      `- r-0000000b bash: sed -i 's/a/b/' src/deep/module.ts → exit 0\n${spanLine}`,
      true,
    );
    expect(checkReceipt(items.slice(0, 1), after).map((p) => [p.place, p.recall])).toEqual([
      ['pointer', { id: 'r-0000000b' }],
    ]);
  });
});
