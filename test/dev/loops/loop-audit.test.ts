import { afterAll, describe, expect, it } from '@jest/globals';
import { contractBreaches, type LoopOutcome } from '#dev/loops/loop-matrix.js';
import { auditPrompt, freeAuditEncoder, type SeenPrompt } from '#dev/loops/prompt-audit.js';
import { sourceText } from '#dev/loops/source-text.js';

afterAll(freeAuditEncoder);

const GOAL = 'Find the overflow.';
const call = (id: string) => ({ id, name: 'read_file', arguments: '{"path":"src/a.ts"}' });

function prompt(messages: SeenPrompt['messages']): SeenPrompt {
  return { system: ['You review code.'], messages, tools: '[]' };
}

describe('agent-loop matrix: the prompt audit', () => {
  it('H1/C1/N1: a paired prompt that states the task passes; tokens grow with every text, call and result', () => {
    const base = prompt([{ role: 'user', texts: [GOAL], calls: [] }]);
    const full = prompt([
      { role: 'user', texts: [GOAL], calls: [] },
      { role: 'assistant', texts: ['Reading.'], calls: [call('c1')] },
      { role: 'tool', texts: ['export const a = 1;'], calls: [], answers: 'c1' },
    ]);
    const a = auditPrompt(full, GOAL);
    expect(a).toMatchObject({ pairingValid: true, taskPresent: true, summaries: [] });
    expect(a.tokens).toBeGreaterThan(auditPrompt(base, GOAL).tokens + 10);
    expect(
      auditPrompt({ ...full, tools: JSON.stringify([{ name: 'read_file' }]) }, GOAL).tokens,
    ).toBeGreaterThan(a.tokens);
  });

  it('H1/C1/N1: an orphaned result, an unanswered call, a result answered twice and a missing task are caught', () => {
    const orphan = prompt([
      { role: 'user', texts: [GOAL], calls: [] },
      { role: 'tool', texts: ['x'], calls: [], answers: 'c9' },
    ]);
    const unanswered = prompt([
      { role: 'user', texts: [GOAL], calls: [] },
      { role: 'assistant', texts: [], calls: [call('c1')] },
    ]);
    const twice = prompt([
      { role: 'user', texts: [GOAL], calls: [] },
      { role: 'assistant', texts: [], calls: [call('c1')] },
      { role: 'tool', texts: ['x'], calls: [], answers: 'c1' },
      { role: 'tool', texts: ['x'], calls: [], answers: 'c1' },
    ]);
    for (const p of [orphan, unanswered, twice]) expect(auditPrompt(p, GOAL).pairingValid).toBe(false);
    // The goal line inside a tool result does not count as the task.
    const noTask = prompt([
      { role: 'user', texts: ['hello'], calls: [] },
      { role: 'assistant', texts: [], calls: [call('c1')] },
      { role: 'tool', texts: [GOAL], calls: [], answers: 'c1' },
    ]);
    expect(auditPrompt(noTask, GOAL).taskPresent).toBe(false);
    // A summary that restates the task keeps it present, and is counted as a summary.
    const summarized = prompt([
      { role: 'user', texts: [`Previous conversation summary:\n${GOAL}`], calls: [] },
    ]);
    expect(auditPrompt(summarized, GOAL)).toMatchObject({
      taskPresent: true,
      summaries: [expect.any(String)],
    });
  });

  it('H1/C1/N1: a loop that threw or sent prompts over the window is reported in one line each', () => {
    const outcome: LoopOutcome = {
      cell: { kind: { framework: 'ai-sdk', mode: 'generateText' }, window: 8_000, resultTokens: 4_000 },
      budget: 8_000,
      finished: false,
      error: 'RequestOverWindowError: too big',
      modelCalls: 4,
      largestPrompt: 9_000,
      overBudget: 1,
      badPairing: 0,
      taskMissing: 0,
      summaries: 1,
      summariesPer10: 3.3,
    };
    expect(contractBreaches(outcome)).toEqual([
      'ai-sdk generateText 8k × 4k: did not finish (RequestOverWindowError: too big)',
      'ai-sdk generateText 8k × 4k: 1 of 4 prompts over 8000 tokens (largest 9000)',
    ]);
    expect(contractBreaches({ ...outcome, finished: true, overBudget: 0, error: undefined })).toEqual([]);
  });

  it('the tool output is deterministic, of the asked token size, and differs from read to read', () => {
    const source = sourceText();
    expect(source.read(3, 2_000)).toBe(source.read(3, 2_000));
    expect(source.read(3, 2_000)).not.toBe(source.read(4, 2_000));
    const tokens = auditPrompt(
      prompt([{ role: 'tool', texts: [source.read(3, 2_000)], calls: [] }]),
      GOAL,
    ).tokens;
    const empty = auditPrompt(prompt([{ role: 'tool', texts: [], calls: [] }]), GOAL).tokens;
    expect(Math.abs(tokens - empty - 2_000)).toBeLessThanOrEqual(20);
  });
});
