import { describe, expect, it } from '@jest/globals';
import { assign, createMachine, type AnyStateMachine } from 'xstate';
import { loopGuardReason, turnsPerPass } from '#machines/index.js';
import { generatePaths, type PathModel } from '#src/testing/generate-paths.js';
import {
  capacityRetryModel,
  compactionModel,
  hierarchicalSummaryModel,
  turnModel,
} from '#src/testing/models.js';
import { runPathOn as runPath } from '#src/testing/run-path.js';

/*
 * The generated paths must be able to fail: a machine that drifts from the rules is walked,
 * run and judged, and at least one of its paths is judged wrong.
 */

type Config = Record<string, any>;

/** The machine with one transition's target replaced (config copied along the way, nothing shared changed). */
function retargeted(machine: AnyStateMachine, state: string, at: (invoke: Config) => Config, target: string) {
  const config = machine.config as Config;
  const stateConfig = { ...config.states[state], invoke: { ...config.states[state].invoke } };
  const transition = at(stateConfig.invoke);
  transition.target = target;
  return createMachine({ ...config, states: { ...config.states, [state]: stateConfig } } as never).provide(
    machine.implementations as never,
  );
}

/** Messages of every path of `model`, walked on `machine`, that the oracle judges wrong. */
async function judgedWrong(model: PathModel, machine: AnyStateMachine): Promise<string[]> {
  let paths;
  try {
    paths = generatePaths({ ...model, machine });
  } catch (error) {
    return [(error as Error).message];
  }
  const wrong: string[] = [];
  for (const path of paths)
    await runPath(machine, path, model.oracle).catch((e: unknown) => wrong.push((e as Error).message));
  return wrong;
}

describe('a machine change the oracle does not expect fails the generated paths', () => {
  it('the unchanged machines pass (the check below is not vacuous)', async () => {
    expect(await judgedWrong(capacityRetryModel, capacityRetryModel.machine)).toEqual([]);
    expect(await judgedWrong(hierarchicalSummaryModel, hierarchicalSummaryModel.machine)).toEqual([]);
    expect(await judgedWrong(compactionModel, compactionModel.machine)).toEqual([]);
    expect(await judgedWrong(turnModel, turnModel.machine)).toEqual([]);
  });

  it('L5: a capacity rejection that retries at once, skipping the pause, is judged wrong', async () => {
    const machine = retargeted(
      capacityRetryModel.machine,
      'requesting',
      (invoke) => (invoke.onError = invoke.onError.map((t: Config) => ({ ...t })))[0],
      'preparing',
    );
    const wrong = await judgedWrong(capacityRetryModel, machine);
    expect(wrong.join('\n')).toMatch(/in backingOff the run waits/);
  });

  it('L5: a ladder that never retries (guard swapped) is judged wrong on the retry paths', async () => {
    const machine = capacityRetryModel.machine.provide({
      guards: { retryableCapacityRejection: () => false },
    });
    const wrong = await judgedWrong(capacityRetryModel, machine);
    expect(wrong.length).toBeGreaterThan(0);
    expect(wrong[0]).toMatch(/states|rules do not allow/);
  });

  it('L4: an older band that runs out of retries ending as "failed" instead of "exhausted" is judged wrong', async () => {
    const machine = retargeted(
      hierarchicalSummaryModel.machine,
      'summarizingOlderBand',
      (invoke) => (invoke.onDone = invoke.onDone.map((t: Config) => ({ ...t })))[1],
      'failed',
    );
    const wrong = await judgedWrong(hierarchicalSummaryModel, machine);
    expect(wrong).toHaveLength(1);
    expect(wrong[0]).toMatch(/states\[2\]: expected "exhausted", got "failed"/);
  });

  it('A4: an inline request sent although it is below the trigger is judged wrong', async () => {
    const machine = compactionModel.machine.provide({ guards: { isInlineBelowTrigger: () => false } });
    const wrong = await judgedWrong(compactionModel, machine);
    expect(wrong.length).toBeGreaterThan(0);
    expect(wrong.every((m) => /below trigger/.test(m))).toBe(true);
  });

  it('§14: a loop guard that also stops recovery passes is judged wrong', async () => {
    const machine = turnModel.machine.provide({
      guards: {
        // The real rules, but without the "automatic passes only" condition.
        isLoopGuardTripped: ({ context }: any, params: { reason: string }) =>
          loopGuardReason(context.given.loopGuard, context.given.loopGuardPolicy) === params.reason,
      },
    });
    const wrong = await judgedWrong(turnModel, machine);
    expect(wrong.length).toBeGreaterThan(0);
    expect(wrong.every((m) => m.includes('turn: recovery after two failed passes'))).toBe(true);
  });

  it('§14: a guarded request over the prompt budget left uncleared is judged wrong', async () => {
    const machine = turnModel.machine.provide({ guards: { isOverPromptBudget: () => false } });
    const wrong = await judgedWrong(turnModel, machine);
    expect(wrong.join('\n')).toMatch(/over the prompt budget/);
  });

  it('H5: a turn that never puts compaction off while the cache holds is judged wrong', async () => {
    const machine = turnModel.machine.provide({
      actions: {
        // The measured pressure against the policy's threshold alone, ignoring the cached prefix.
        storePressure: assign(({ context }: any, m: any) => {
          const threshold = context.given.policy.thresholdTokens;
          return {
            pressure: {
              ...m,
              thresholdTokens: threshold,
              promptBudgetTokens: context.given.policy.promptBudgetTokens,
              summaryInputBudget: context.given.policy.summaryInputBudget,
              turnsPerPass: turnsPerPass(context.given.policy, threshold, m.newestStepTokens),
            },
            lastSent: m.sent,
            projectionSent: m.sent,
          };
        }) as never,
      },
    });
    const wrong = await judgedWrong(turnModel, machine);
    expect(wrong.length).toBeGreaterThan(0);
    expect(wrong.every((m) => m.includes('turn: waits while the cache holds'))).toBe(true);
  });
});
