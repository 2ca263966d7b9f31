import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { charsCounter } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { msg, type Message } from '#src/messages/message.js';
import { tokensPerMessage } from '#src/projection/tokens-per-message.js';
import { historyArb } from '#support/projection/history-arb.js';

// What each step does to the history the previous request counted.
const stepArb = fc.oneof(
  fc.record({ k: fc.constant('grow' as const), n: fc.nat({ max: 5 }) }),
  fc.record({ k: fc.constant('shrink' as const), n: fc.nat({ max: 5 }) }),
  fc.record({ k: fc.constant('edit' as const), at: fc.nat() }),
  fc.record({ k: fc.constant('in-place' as const), at: fc.nat() }),
);

describe('tokens per message', () => {
  it('T2: growing, shrinking, replaced and in-place edited histories count as est.message counts each message', () => {
    fc.assert(
      fc.property(historyArb, fc.array(stepArb, { maxLength: 8 }), (start, steps) => {
        const est = createEstimator({ counter: charsCounter });
        let h: Message[] = start.slice();
        const check = () => expect(tokensPerMessage(h, est)).toEqual(h.map((m) => est.message(m)));
        check();
        for (const s of steps) {
          if (s.k === 'grow')
            for (let i = 0; i < s.n; i++) h = [...h, msg.user(`turn ${h.length} ${'x'.repeat(i * 40)}`)];
          else if (s.k === 'shrink') h = h.slice(0, Math.max(0, h.length - s.n));
          else if (h.length > 0 && s.k === 'edit') {
            h = h.slice();
            h[s.at % h.length] = msg.user('a replaced message, longer than the one before it');
          } else if (h.length > 0) h[s.at % h.length] = msg.user('edited in place, same array'); // the caller reuses its array
          check();
        }
      }),
      { numRuns: 200 },
    );
  });
});
