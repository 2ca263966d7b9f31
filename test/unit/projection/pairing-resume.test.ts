import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import { msg, type Message } from '#src/messages/message.js';
import { analyzePairing, type Pairing } from '#src/projection/index.js';
import { call } from '#support/projection/helpers.js';
import { historyArb } from '#support/projection/history-arb.js';

const RUNS = { numRuns: 200 };

/** The pairing of a fresh pass: copies of the messages, so no earlier pass can be resumed. */
function freshPairing(history: readonly Message[]): Pairing {
  return analyzePairing(history.map((m) => ({ ...m })));
}

/**
 * One request's view of a random history: a prefix of it, optionally with one message
 * replaced by a copy of another one (an edited history, which must not resume the old pass).
 */
interface ViewSpec {
  length: number;
  edit?: { at: number; from: number };
}

const viewArb = fc.record({
  length: fc.nat(),
  edit: fc.option(fc.record({ at: fc.nat(), from: fc.nat() }), { nil: undefined }),
});

function view(history: readonly Message[], v: ViewSpec): Message[] {
  const out = history.slice(0, history.length === 0 ? 0 : v.length % (history.length + 1));
  if (v.edit && out.length > 0) out[v.edit.at % out.length] = { ...history[v.edit.from % history.length] };
  return out;
}

describe('pairing analysis resumed across requests', () => {
  it('N1/N2: growing, shrinking and edited views of a history pair exactly as a fresh pass does', () => {
    fc.assert(
      fc.property(historyArb, fc.array(viewArb, { minLength: 1, maxLength: 8 }), (history, views) => {
        // Each session's next request mostly grows the last one: analyze every prefix in order too.
        const requests = [
          ...history.map((_, n) => history.slice(0, n + 1)),
          ...views.map((v) => view(history, v)),
        ];
        for (const r of requests) expect(analyzePairing(r)).toEqual(freshPairing(r));
      }),
      RUNS,
    );
  });

  it('N1: a pairing handed out earlier does not change when a longer history is analyzed later', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const handedOut: Pairing[] = [];
        const copies: Pairing[] = [];
        for (let n = 1; n <= history.length; n++) {
          handedOut.push(analyzePairing(history.slice(0, n)));
          copies.push(structuredClone(handedOut[handedOut.length - 1]));
        }
        expect(handedOut).toEqual(copies);
      }),
      RUNS,
    );
  });

  it('N1/N4: results that arrive after a request bind to the batch it handed out, without changing that request', () => {
    const history = [
      msg.user('go'),
      msg.assistant('', [call('a'), call('b')]),
      msg.tool('b', 'B'),
      msg.user('meanwhile'),
      msg.tool('a', 'A'),
    ];
    const early = analyzePairing(history.slice(0, 3));
    expect(early.batches[0].resultOfCall).toEqual([-1, 2]);
    expect(early.unmatchedCalls).toBe(1);
    const late = analyzePairing(history);
    expect(late.batches[0].resultOfCall).toEqual([4, 2]);
    expect(late.valid).toBe(false); // the result of `a` does not directly follow its batch
    expect(early.batches[0].resultOfCall).toEqual([-1, 2]);
    expect(early.valid).toBe(false);
    expect(late).toEqual(freshPairing(history));
  });
});
