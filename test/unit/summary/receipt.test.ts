import { describe, expect, it } from '@jest/globals';
import { msg } from '#src/messages/message.js';
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
