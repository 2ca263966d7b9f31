import { afterAll, describe, expect, it } from '@jest/globals';
import { charsCounter, freeEncoders } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { msg, type Message } from '#src/messages/message.js';
import type { ClearingPolicy, CompactionSettings } from '#src/projection/index.js';
import { createCompactorSession } from '#src/session/index.js';
import { parseArgs } from 'node:util';
import { settingsFrom } from '#src/cli/settings-flags.js';
import { parseFlags } from '#src/cli/flags.js';
import { RUN_OPTIONS, RunFlagsSchema } from '#src/cli/run-options.js';
import type { CompactorConfig } from '#src/cli/config.js';

/**
 * Cache-aware compaction through the session API: capacity 32,000 with
 * 8,000 reserved gives a prompt budget of 24,000 and a threshold of 18,000 (75 %). While the
 * second request extends the first unchanged, compaction waits 85 % of the way to the budget
 * (18,000 + 5,100), at most 7,000 tokens past the threshold (fewer in larger budgets); the
 * opt-in `compaction.waitByCost` drops the wait where the expected cost says it cannot pay. All
 * are options.
 */

afterAll(freeEncoders);
const estimator = createEstimator({ counter: charsCounter });
const limits = { capacity: 32_000, reservedOutput: 8_000 };

/** `n` user/assistant exchanges about the repository, about 600 tokens each. */
function exchanges(from: number, n: number): Message[] {
  const out: Message[] = [];
  for (let i = from; i < from + n; i++) {
    out.push(msg.user(`Step ${i}: ${'check the parser module and report what changed. '.repeat(24)}`));
    out.push(msg.assistant(`Step ${i} done: ${'src/parser.ts now rejects empty input. '.repeat(30)}`));
  }
  return out;
}

/** Two turns: the first below the threshold, the second between the threshold and the waited one. */
async function secondTurn(
  settings: { policy?: Partial<ClearingPolicy>; compaction?: CompactionSettings } = {},
  preset?: 'vtcode',
  at: { limits: typeof limits; first: number; more: number } = { limits, first: 20, more: 13 },
) {
  const s = createCompactorSession({
    estimator,
    limits: at.limits,
    history: [msg.system('You are a coding agent.'), ...exchanges(0, at.first)],
    ...settings,
    ...(preset ? { preset } : {}),
  });
  const first = await s.runTurn();
  expect(first.decision).toBe('below-threshold');
  const second = await s.runTurn({ pending: exchanges(at.first, at.more) });
  return { first, second };
}

describe('compaction waits while the prompt cache is intact', () => {
  it('H5: by default the second turn waits 85 % of the way to the prompt budget (threshold 23,100), so no summary call', async () => {
    const { first, second } = await secondTurn();
    expect(first.thresholdTokens).toBe(18_000); // no previous request: nothing cached yet
    expect(second.thresholdTokens).toBe(23_100);
    expect(second.pressureTokens!).toBeGreaterThanOrEqual(18_000);
    expect(second.pressureTokens!).toBeLessThan(23_100);
    expect(second.decision).toBe('below-threshold');
    expect(second.summaryCalls).toBe(0);
  });

  it('H5: compaction.waitRatio and compaction.waitMaxTokens set how far it waits; past that the same turn compacts', async () => {
    const byRatio = await secondTurn({ compaction: { waitRatio: 0.1 } });
    expect(byRatio.second.thresholdTokens).toBe(18_600);
    expect(byRatio.second.decision).toBe('compacted');
    const byCap = await secondTurn({ compaction: { waitMaxTokens: 500 } });
    expect(byCap.second.thresholdTokens).toBe(18_500);
    expect(byCap.second.decision).toBe('compacted');
  });

  it('H5: in a 64k window the wait is capped at 3,000 tokens (7,000 scaled by 24,000 / 56,000), so a request that a flat cap let wait compacts', async () => {
    const at = { limits: { capacity: 64_000, reservedOutput: 8_000 }, first: 60, more: 18 };
    const { first, second } = await secondTurn(undefined, undefined, at);
    expect(first.thresholdTokens).toBe(42_000);
    expect(second.thresholdTokens).toBe(45_000);
    expect(second.decision).toBe('compacted');
    expect(second.summaryCalls).toBe(1);
    // The same history stays under 53,900, where the old flat 12,000-token cap put the threshold.
    const sent = estimator.history([msg.system('You are a coding agent.'), ...exchanges(0, 78)]);
    expect(sent).toBeGreaterThanOrEqual(45_000);
    expect(sent).toBeLessThan(53_900);
  });

  /** 200k window: threshold 144,000; the second request (144,380 tokens) lies inside a 875-token wait. */
  const at200k = { limits: { capacity: 200_000, reservedOutput: 8_000 }, first: 236, more: 4 };

  it('H5: in a 200k window the defaults (preset compactor) wait 875 tokens past the threshold (7,000 scaled by 24,000 / 192,000), where the wait by expected cost used to run compaction at the threshold', async () => {
    const { second } = await secondTurn(undefined, undefined, at200k);
    expect(second.thresholdTokens).toBe(144_875);
    expect(second.pressureTokens!).toBeGreaterThanOrEqual(144_000);
    expect(second.decision).toBe('below-threshold'); // 144,380 tokens: inside the wait
    expect(second.summaryCalls).toBe(0);
    const named = await secondTurn({ policy: { preset: 'compactor' } }, undefined, at200k);
    expect(named.second.thresholdTokens).toBe(144_875);
  });

  it('H5: compaction.waitByCost: true restores the wait by expected cost: in a 200k window a pass is rarer than the cheapest cycle, so the same turn compacts at the threshold', async () => {
    const { second } = await secondTurn({ compaction: { waitByCost: true } }, undefined, at200k);
    expect(second.thresholdTokens).toBe(144_000);
    expect(second.decision).toBe('compacted');
    expect(second.summaryCalls).toBe(1);
    // In a 32k window the same option keeps the wait: there a pass pays for itself sooner.
    const small = await secondTurn({ compaction: { waitByCost: true } });
    expect(small.second.thresholdTokens).toBe(23_100);
    expect(small.second.decision).toBe('below-threshold');
  });

  it('H5: the CLI flag --compaction-wait-by-cost gives the session the wait by expected cost; --no-compaction-wait-by-cost (the default) overrides a config that turns it on', async () => {
    const policy = (args: string[], config: CompactorConfig = {}) => {
      const { values } = parseArgs({ args, options: RUN_OPTIONS, strict: true });
      const { policy: p, compaction } = settingsFrom(parseFlags('run', RunFlagsSchema, values), config);
      return { policy: p, compaction };
    };
    const gate = await secondTurn(policy(['--compaction-wait-by-cost']), undefined, at200k);
    expect(gate.second.thresholdTokens).toBe(144_000);
    expect(gate.second.decision).toBe('compacted');
    for (const args of [[], ['--no-compaction-wait-by-cost']]) {
      const waits = await secondTurn(policy(args), undefined, at200k);
      expect(waits.second.thresholdTokens).toBe(144_875);
    }
    const fromConfig = { compaction: { waitByCost: true } };
    expect(policy([], fromConfig).compaction.waitByCost).toBe(true);
    const overridden = await secondTurn(
      policy(['--no-compaction-wait-by-cost'], fromConfig),
      undefined,
      at200k,
    );
    expect(overridden.second.thresholdTokens).toBe(144_875);
  });

  it("H5: preset vtcode (VT Code's rules) compacts at the threshold", async () => {
    const { second } = await secondTurn(undefined, 'vtcode');
    expect(second.thresholdTokens).toBe(18_000);
    expect(second.decision).toBe('compacted');
  });
});
