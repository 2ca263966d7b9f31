import { describe, expect, it } from '@jest/globals';
import { msg, textOf } from '#src/messages/message.js';
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
