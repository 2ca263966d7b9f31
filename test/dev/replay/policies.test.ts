import { describe, it, expect } from '@jest/globals';
import { msg, textOf, type Message } from '#src/messages/message.js';
import { isRequestHistoryValid } from '#src/projection/normalize.js';
import {
  aiSdkPrunePolicy,
  anthropicClearToolUsesPolicy,
  ANTHROPIC_PLACEHOLDER,
  allPolicies,
  compactorCandidates,
  compactorEvidencePolicy,
  compactorPolicy,
  compactorVtcodePolicy,
  geminiMaskPolicy,
  keepLastMessagesPolicy,
  langchainClearToolUsesPolicy,
  langchainTrimPolicy,
  opencodePrunePolicy,
  OPENCODE_PLACEHOLDER,
  vtcodePerResultPolicy,
} from '#dev/replay/policies/index.js';
import { contextFor, readSession } from '#support/replay/helpers.js';

const results = (h: readonly Message[]) => h.filter((m) => m.role === 'tool');
const unchanged = (before: readonly Message[], after: readonly Message[]) =>
  results(after).filter((m) => results(before).includes(m)).length;
const ctx128 = () => contextFor({ capacity: 128_000, reservedOutput: 8_000 });

// 60 batches × ~2,000 chars-tokens ≈ 120k tokens: above every peer trigger.
const big = readSession(60, 100).slice(0, -1);

describe('library adapters really run (retention pilot)', () => {
  it('§14: AI SDK pruneMessages removes old calls and results together and keeps the last 2 messages', async () => {
    const out = await aiSdkPrunePolicy.project(big, ctx128());
    expect(results(out)).toHaveLength(1);
    expect(out.filter((m) => m.toolCalls).length).toBe(1);
    expect(out.at(-1)).toBe(big.at(-1));
    expect(isRequestHistoryValid(out)).toBe(true);
  });
  it('§14: LangChain ClearToolUsesEdit clears all but the 3 newest results with "[cleared]" above 100k tokens', async () => {
    const out = await langchainClearToolUsesPolicy.project(big, ctx128());
    const cleared = results(out).filter((m) => textOf(m.content) === '[cleared]');
    expect(cleared).toHaveLength(57);
    expect(unchanged(big, out)).toBe(3);
    expect(isRequestHistoryValid(out)).toBe(true);
  });
  it('§14: LangChain ClearToolUsesEdit leaves a history under its trigger untouched', async () => {
    const small = readSession(5);
    const out = await langchainClearToolUsesPolicy.project(small, ctx128());
    expect(out).toEqual(small);
  });
  it('§14: LangChain trimMessages keeps the system message and the newest messages within the local trigger', async () => {
    const ctx = ctx128();
    const out = await langchainTrimPolicy.project(big, ctx);
    expect(out[0]).toBe(big[0]);
    expect(out.length).toBeLessThan(big.length);
    expect(ctx.estimator.history(out)).toBeLessThanOrEqual(ctx.budgets.localTrigger);
    expect(out.at(-1)).toBe(big.at(-1));
    expect(['user', 'assistant']).toContain(out[1].role);
    expect(isRequestHistoryValid(out)).toBe(true);
  });
});

describe('re-implemented peer policies (retention pilot)', () => {
  it('§14: Anthropic clear_tool_uses keeps the 3 newest results above 100k tokens', async () => {
    const out = await anthropicClearToolUsesPolicy.project(big, ctx128());
    expect(results(out).filter((m) => m.content === ANTHROPIC_PLACEHOLDER)).toHaveLength(57);
  });
  it('§14: VT Code per-result keeps exactly the newest 2 results (no batch expansion)', async () => {
    const out = await vtcodePerResultPolicy.project(big, ctx128());
    expect(unchanged(big, out)).toBe(2);
  });
  it('§14: opencode prunes nothing inside the two newest user turns, and prunes older output past 40k once ≥ 20k is freed', async () => {
    expect(await opencodePrunePolicy.project(big, ctx128())).toBe(big);
    const later = [...big, msg.user('next'), msg.assistant('ok'), msg.user('and next')];
    const out = await opencodePrunePolicy.project(later, ctx128());
    const pruned = results(out).filter((m) => m.content === OPENCODE_PLACEHOLDER);
    expect(pruned.length).toBeGreaterThan(30);
    expect(results(out).at(-1)).toBe(results(big).at(-1));
  });
  it('§14: Gemini masking protects the newest 50k tool tokens and masks older ones', async () => {
    const out = await geminiMaskPolicy.project(big, ctx128());
    const masked = results(out).filter((m) => textOf(m.content).startsWith('<tool_output_masked'));
    expect(masked.length).toBeGreaterThan(20);
    expect(unchanged(big, out)).toBeGreaterThan(20);
  });
  it('§14: keep-last-N keeps system messages and a pairing-safe tail once the local trigger is reached', async () => {
    const out = await keepLastMessagesPolicy(5).project(big, ctx128());
    expect(out[0]).toBe(big[0]);
    expect(out[1].role).toBe('assistant');
    expect(out.length).toBeLessThanOrEqual(6);
    expect(isRequestHistoryValid(out)).toBe(true);
  });
  it('§14 / pilot: Compactor settings 0 and 2 (vtcode preset) differ only in the count rule', async () => {
    const tight = contextFor({ capacity: 128_000, reservedOutput: 8_000 });
    const a = await compactorVtcodePolicy(0).project(big, tight);
    const b = await compactorVtcodePolicy().project(big, tight);
    expect(unchanged(big, b)).toBeGreaterThanOrEqual(unchanged(big, a));
  });
  it('B4/C2 pilot: opt-in evidence ratios 0.75 and 0.9 keep more results verbatim than the vtcode preset', async () => {
    const tight = contextFor({ capacity: 128_000, reservedOutput: 8_000 });
    const half = unchanged(big, await compactorVtcodePolicy().project(big, tight));
    const r75 = unchanged(big, await compactorEvidencePolicy(0.75).project(big, tight));
    const r90 = unchanged(big, await compactorEvidencePolicy(0.9).project(big, tight));
    expect(r75).toBeGreaterThan(half);
    expect(r90).toBeGreaterThan(r75);
  });
  it('pilot: the defaults (preset compactor) send the history unchanged where the vtcode preset clears', async () => {
    const tight = contextFor({ capacity: 128_000, reservedOutput: 8_000 });
    expect(await compactorPolicy().project(big, tight)).toEqual(big);
    expect(unchanged(big, await compactorVtcodePolicy().project(big, tight))).toBeLessThan(big.length);
    expect(compactorPolicy().clearing).toEqual({});
    expect(compactorVtcodePolicy().clearing).toEqual({ preset: 'vtcode' });
  });
  it("pilot: the candidates hold the defaults (the scaled cap everywhere) once, and last session's defaults (the wait by expected cost) as compactor-wait-by-cost", () => {
    const byName = new Map(compactorCandidates().map((p) => [p.name, p]));
    expect([...byName.keys()]).toEqual([
      'compactor-vtcode',
      'vtcode-evidence-0.9-batch-5k-wait',
      'compactor',
      'compactor-wait-by-cost',
      'compactor-wait-half',
      'compactor-clearing-evidence-0.9-batch-20k',
    ]);
    // Each is a policy handed to a session: the defaults add nothing, the other sets the gate.
    expect(byName.get('compactor')!.clearing).toEqual({});
    expect(byName.get('compactor-wait-by-cost')!.clearing).toEqual({ waitByCost: true });
  });
  it('B4 pilot: the existing policies keep their names and order; the evidence variants and the defaults come last', () => {
    expect(allPolicies().map((p) => [p.name, p.source])).toEqual([
      ['no-clearing', 'baseline'],
      ['keep-last-20', 'baseline'],
      ['langchain-trim', 'library'],
      ['ai-sdk-prune', 'library'],
      ['vtcode-per-result', 'reimplemented'],
      ['opencode-prune', 'reimplemented'],
      ['gemini-mask', 'reimplemented'],
      ['anthropic-clear', 'reimplemented'],
      ['langchain-clear', 'library'],
      ['compactor-vtcode-keep0', 'compactor'],
      ['compactor-vtcode', 'compactor'],
      ['compactor-evidence-0.75', 'compactor'],
      ['compactor-evidence-0.9', 'compactor'],
      ['compactor', 'compactor'],
    ]);
  });
});
