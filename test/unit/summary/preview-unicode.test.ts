import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg } from '#src/messages/message.js';
import { pruneOversizedToolOutputs } from '#src/summary/index.js';
import { headWithinTokens, previewText, tailWithinTokens } from '#src/summary/preview.js';

afterAll(freeEncoders);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const est = createEstimator();
// Mixed widths so cut points land on every offset: emoji (2 UTF-16 units), CJK, ASCII.
const text = Array.from({ length: 3_000 }, (_, i) => ['😀', '你', 'a', '𝄞x'][i % 4]).join('');

describe('previews never split a surrogate pair (L2, L3)', () => {
  it('L2: head and tail cuts at every budget keep well-formed UTF-16 (a lone surrogate makes the request body invalid JSON for providers)', () => {
    for (let tokens = 1; tokens <= 60; tokens++) {
      expect(headWithinTokens(text, tokens, est)).not.toMatch(LONE_SURROGATE);
      expect(tailWithinTokens(text, tokens, est)).not.toMatch(LONE_SURROGATE);
      expect(previewText(text, tokens + 20, est)).not.toMatch(LONE_SURROGATE);
    }
  });

  it('L2: an oversized emoji-heavy tool output is previewed into well-formed text', () => {
    const big = '😀'.repeat(20_000);
    const [, , pruned] = pruneOversizedToolOutputs(
      [msg.user('go'), msg.assistant('', [{ id: 'c', name: 'cat', arguments: '{}' }]), msg.tool('c', big)],
      est,
    );
    expect(typeof pruned.content === 'string' && pruned.content.length < big.length).toBe(true);
    expect(pruned.content).not.toMatch(LONE_SURROGATE);
  });
});

describe('the offline summary never splits a surrogate pair (§14, L8)', () => {
  it('L8: clipped goals and commands full of emoji stay well-formed in full and abstract renderings', async () => {
    const { createOfflineSummarizer, ABSTRACT_INSTRUCTIONS } = await import('#src/summary/index.js');
    const summarizer = createOfflineSummarizer({ estimator: est });
    const messages = [];
    for (let shift = 0; shift < 4; shift++) {
      const noisy = 'x'.repeat(shift) + '😀'.repeat(400);
      messages.push(
        msg.user(`Please fix ${noisy}`),
        msg.assistant('', [
          { id: `c${shift}`, name: 'bash', arguments: JSON.stringify({ command: `echo ${noisy}` }) },
        ]),
        msg.tool(`c${shift}`, `exit code 1\n${noisy}`),
      );
    }
    for (const instructions of ['Summarize.', ABSTRACT_INSTRUCTIONS]) {
      const r = await summarizer.summarize({ model: 'offline', messages, instructions });
      expect(r.text).not.toMatch(LONE_SURROGATE);
    }
  });
});
