import { afterAll, describe, expect, it } from '@jest/globals';
import {
  CompactorOptionsError,
  createCompactorSession,
  createEstimator,
  freeEncoders,
  msg,
  UserError,
} from '#src/index.js';
import { projectRequest } from '#src/entries/projection.js';
import { SessionOptionsSchema } from '#src/session/options.js';
import { LimitsSchema } from '#src/projection/index.js';

afterAll(freeEncoders);

/** Runs `fn`, expecting one CompactorOptionsError; returns its message. */
function optionsError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CompactorOptionsError);
    expect(e).toBeInstanceOf(UserError);
    const message = (e as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a CompactorOptionsError');
}

describe('one option vocabulary, one options error', () => {
  const estimator = createEstimator();
  const history = [msg.user('goal'), msg.assistant('ok')];

  it('D3: recordUsage with a missing count throws one line naming usage.inputTokens', () => {
    const s = createCompactorSession();
    const message = optionsError(() => s.recordUsage({ inputTokens: undefined } as never, history));
    expect(message).toMatch(/^recordUsage: usage\.inputTokens: .*expected number/);
  });

  it('D3: a bad session option names its path', () => {
    expect(optionsError(() => createCompactorSession({ limits: { capacity: -1 } }))).toMatch(
      /^createCompactorSession: options\.limits\.capacity: /,
    );
    expect(optionsError(() => createCompactorSession({ cacheHealth: { alertAfter: 0 } }))).toMatch(
      /^cacheHealth\.alertAfter: /,
    );
  });

  it('D3: projectRequest validates its options (a typo is named, not ignored)', () => {
    const typo = { limits: { capcity: 1_000 }, estimator } as never;
    expect(optionsError(() => projectRequest(history, typo))).toMatch(
      /^projectRequest: options\.limits: .*capcity/,
    );
    const noEstimator = { limits: {} } as never;
    expect(optionsError(() => projectRequest(history, noEstimator))).toMatch(/options\.estimator/);
  });

  it('B1: projectRequest takes capacity, trigger and threshold under the session names', () => {
    const r = projectRequest(history, {
      limits: { capacity: 10_000, trigger: 3_000, threshold: 5_000 },
      estimator,
    });
    expect(r.budgets).toMatchObject({ capacity: 10_000, localTrigger: 3_000, compactionThreshold: 5_000 });
    // The old names are gone: a typo-proof schema rejects them rather than reading them.
    const old = { limits: { providerLimit: 10_000 }, estimator } as never;
    expect(optionsError(() => projectRequest(history, old))).toMatch(/options\.limits: .*providerLimit/);
  });

  it('B1: every session limit is a projectRequest limit of the same name', () => {
    const sessionLimits = Object.keys(SessionOptionsSchema.shape.limits.unwrap().shape);
    const requestLimits = Object.keys(LimitsSchema.shape);
    for (const key of sessionLimits) expect(requestLimits).toContain(key);
    // And a session prepares exactly what projectRequest gives for those limits.
    const s = createCompactorSession({ history, limits: { capacity: 10_000, trigger: 3_000 } });
    const direct = projectRequest(history, { limits: { ...s.limits }, estimator });
    expect(s.prepareRequest().budgets).toEqual(direct.budgets);
  });
});
