import { describe, expect, it } from '@jest/globals';
import { createActor, createMachine, fromPromise, toPromise } from 'xstate';
import { msg } from '#src/messages/message.js';
import { createJsonlInspector, summarizeForLog } from '#src/runtime/index.js';
import {
  capacityRetryMachine,
  type RequestSummaryInput,
  type RequestSummaryOutput,
} from '#machines/index.js';

describe('JSONL inspection', () => {
  it('S4: message arrays become counts and secrets are redacted', () => {
    const out = summarizeForLog({
      history: [msg.user('hello'), msg.assistant('hi')],
      apiKey: 'sk-abcdefghijklmnopqrstuvwxyz',
      note: 'Authorization: Bearer abcdefghijklmnop1234',
    });
    expect(out).toEqual({
      history: { messages: 2 },
      apiKey: '[REDACTED]',
      note: 'Authorization: Bearer [REDACTED]',
    });
  });

  it('writes one JSON line per actor, event and snapshot of every actor in the system', async () => {
    const lines: string[] = [];
    const machine = capacityRetryMachine.provide({
      actors: {
        prepareSummaryInput: fromPromise(async () => ({ inputTokens: 10 })),
        requestSummary: fromPromise<RequestSummaryOutput, RequestSummaryInput>(async () => ({
          summaryRef: 's',
          summaryTokens: 2,
          inputTokens: 10,
          finishReason: 'stop',
          followsTemplate: true,
          empty: false,
        })),
      },
    });
    const actor = createActor(machine, {
      input: { turnId: 't', historyRef: 'h', band: 'flat', budget: 100 },
      inspect: createJsonlInspector((l) => lines.push(l)),
    });
    actor.start();
    await toPromise(actor);
    const records = lines.map(
      (l) => JSON.parse(l) as { type: string; actor: string; event?: { type: string } },
    );
    expect(new Set(records.map((r) => r.type))).toEqual(
      new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot']),
    );
    expect(records.some((r) => r.actor === 'requestSummary' && r.type === '@xstate.actor')).toBe(true);
    expect(records.some((r) => r.event?.type === 'xstate.done.actor.requestSummary')).toBe(true);
    expect(lines.every((l) => l.endsWith('\n'))).toBe(true);
  });

  it('S4: every inspection log line carries its time (ISO 8601, UTC) within the run', async () => {
    const lines: string[] = [];
    const before = Date.now();
    const actor = createActor(createMachine({ initial: 'a', states: { a: { type: 'final' } } }), {
      inspect: createJsonlInspector((l) => lines.push(l)),
    });
    actor.start();
    await toPromise(actor);
    const after = Date.now();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const at = (JSON.parse(line) as { at?: string }).at ?? '';
      expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(at)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(at)).toBeLessThanOrEqual(after);
    }
  });
});
