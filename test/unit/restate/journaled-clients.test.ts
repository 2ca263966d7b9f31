import { describe, expect, it } from '@jest/globals';
import {
  BudgetError,
  CompactorError,
  ContextCapacityError,
  EmptySummaryError,
  ProviderError,
} from '#src/core/errors.js';
import type { SummaryClient } from '#src/providers/types.js';
import { journaledClients } from '#src/restate/journaled-clients.js';
import type { ObjectSharedContext } from '#src/restate/sdk.js';
import type { SessionRoute } from '#src/session/route.js';

/**
 * A journal that keeps each step's result as JSON, the way Restate keeps it: `replay()` starts
 * the handler over, and steps already recorded are read back instead of run.
 */
function journal() {
  const steps: string[] = [];
  let next = 0;
  const ctx: Omit<ObjectSharedContext, 'objectClient'> = {
    key: 'k',
    get: () => Promise.resolve(null),
    async run<T>(_name: string, action: () => Promise<T>): Promise<T> {
      const i = next++;
      if (i < steps.length) return JSON.parse(steps[i]!) as T;
      const value = await action();
      steps.push(JSON.stringify(value));
      return value;
    },
  };
  return { ctx, replay: () => void (next = 0) };
}

/** A route whose summary client throws `error` and counts its calls. */
function failingRoute(error: unknown) {
  const calls = { n: 0 };
  const summary: SummaryClient = {
    provider: 'openai',
    model: 'gpt-test',
    summarize: () => {
      calls.n++;
      return Promise.reject(error);
    },
  };
  return { route: { summary } as unknown as SessionRoute, calls };
}

const request = { model: 'gpt-test', messages: [], instructions: 'summarize' };
const info = { provider: 'openai', model: 'gpt-test', status: 400 };

/** The error of the first run and of the replayed run (which must not call the provider again). */
async function firstAndReplayed(error: unknown): Promise<[unknown, unknown]> {
  const { ctx, replay } = journal();
  const { route, calls } = failingRoute(error);
  const first = await journaledClients(ctx, route)
    .summary.summarize(request)
    .catch((e: unknown) => e);
  replay();
  const again = await journaledClients(ctx, route)
    .summary.summarize(request)
    .catch((e: unknown) => e);
  expect(calls.n).toBe(1);
  return [first, again];
}

describe('provider calls recorded as durable steps: a failure is read back as an error of the family', () => {
  it('provider errors keep their class, code and details, so the compaction machines take the same path', async () => {
    for (const error of [
      new ContextCapacityError('too long', info),
      new EmptySummaryError(info),
      new ProviderError('answered 400', info),
    ]) {
      const [first, again] = await firstAndReplayed(error);
      for (const e of [first, again]) {
        expect((e as Error).constructor).toBe(error.constructor);
        expect(e).toMatchObject({ name: error.name, code: error.code, message: error.message, info });
      }
    }
  });

  it('any other failure comes back as a CompactorError under its own name, with its code when it had one', async () => {
    const [, budget] = await firstAndReplayed(new BudgetError('summary input budget', 10, 5));
    expect(CompactorError.isInstance(budget)).toBe(true);
    expect(budget).toMatchObject({ name: 'BudgetError', code: 'budget' });
    const [, plain] = await firstAndReplayed(new TypeError('fetch failed'));
    expect(CompactorError.isInstance(plain)).toBe(true);
    expect(plain).toMatchObject({ name: 'TypeError', code: 'recorded-failure', message: 'fetch failed' });
  });
});
