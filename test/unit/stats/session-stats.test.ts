import { afterAll, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { computeSessionStats } from '#src/stats/index.js';
import { createEstimator, MESSAGE_OVERHEAD, TOOL_CALL_OVERHEAD } from '#src/estimate/estimator.js';
import { charsCounter, freeEncoders } from '#src/estimate/counters.js';
import { readSessionFile, selectSession } from '#src/formats/index.js';
import { msg } from '#src/messages/message.js';
import { rawDir } from '#support/paths.js';

afterAll(freeEncoders);

const call = (id: string, name = 'read') => ({ id, name, arguments: '{}' });

describe('session stats', () => {
  const history = [
    msg.system('sys'),
    msg.user('go'),
    msg.assistant('', [call('a'), call('b', 'grep'), call('c')]),
    msg.tool('b', 'x'.repeat(400)),
    msg.tool('a', 'short'),
    msg.tool('zzz', 'orphan'),
    msg.assistant('again', [call('a')]), // reused id: binds to this later call
    msg.tool('a', 'second'),
    msg.tool('a', 'duplicate answer'),
    msg.assistant('done'),
  ];
  const s = computeSessionStats(history, { estimator: createEstimator({ counter: charsCounter }) });

  it('counts messages by role, calls, results and batches', () => {
    expect(s.messages).toBe(10);
    expect(s.byRole).toEqual({ system: 1, user: 1, assistant: 3, tool: 5 });
    expect(s.toolCalls).toBe(4);
    expect(s.toolResults).toBe(5);
    expect(s.batches).toBe(2);
    expect(s.parallelBatches).toBe(1);
    expect(s.maxFanOut).toBe(3);
  });

  it('N1: pairing binds each result to the most recent earlier unmatched call; leftovers reported', () => {
    expect(s.pairedCalls).toBe(3); // b, a, a(second)
    expect(s.unmatchedCalls).toBe(1); // c
    expect(s.orphanResults).toBe(2); // zzz, the duplicate answer to a
    expect(s.pairedCalls + s.unmatchedCalls).toBe(s.toolCalls);
  });

  it('T1: token totals by role sum to the total; per-tool rows add up', () => {
    const byRole = Object.values(s.tokens.byRole).reduce((a, b) => a + b, 0);
    expect(s.tokens.total).toBe(byRole);
    expect(s.tokens.encoding).toBe('chars');
    const grep = s.tools.find((t) => t.tool === 'grep');
    expect(grep).toMatchObject({ calls: 1, results: 1, resultTokens: MESSAGE_OVERHEAD + 100 + 1 });
    expect(grep?.callTokens).toBe(TOOL_CALL_OVERHEAD + 1 + 1);
    expect(s.tools[0].tool).toBe('grep'); // largest result tokens first
    expect(s.largestResults[0]).toMatchObject({ tool: 'grep', callId: 'b', index: 3, chars: 400 });
    expect(s.largestResults.length).toBe(5);
  });
});

describe('stats on every real session (D2)', () => {
  const files = readdirSync(rawDir).flatMap((d) => readdirSync(join(rawDir, d)).map((f) => join(d, f)));
  const estimator = createEstimator({ counter: charsCounter });

  it.each(files)('%s: calls = paired + unmatched, no orphan results, plausible tokens', (file) => {
    const r = readSessionFile(join(rawDir, file));
    for (const session of r.sessions) {
      const s = computeSessionStats(session.messages, { estimator });
      expect(s.pairedCalls + s.unmatchedCalls).toBe(s.toolCalls);
      expect(s.orphanResults).toBe(0);
      expect(s.pairedCalls).toBe(s.toolResults);
      // Only a final action (submit / finish) may be left unanswered.
      expect(s.unmatchedCalls).toBeLessThanOrEqual(1);
      expect(s.tokens.total).toBeGreaterThan(s.messages * MESSAGE_OVERHEAD);
    }
  });

  it('parallel batches are detected in the Claude Code files', () => {
    const dir = 'd-kimuson__claude-code-viewer';
    const par = (f: string) => {
      const s = computeSessionStats(selectSession(readSessionFile(join(rawDir, dir, f))).messages, {
        estimator,
      });
      return [s.parallelBatches, s.maxFanOut];
    };
    expect(par('1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl')).toEqual([2, 5]);
    expect(par('5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl')).toEqual([2, 3]);
    expect(par('fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl')).toEqual([3, 3]);
  });
});
