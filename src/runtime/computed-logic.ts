import type { PromiseActorLogic, PromiseSnapshot } from 'xstate';

// The events a promise actor sends itself when its promise settles; this logic sends the same.
const RESOLVE = 'xstate.promise.resolve';
const REJECT = 'xstate.promise.reject';

type Settled = { type: string; data?: unknown };

/**
 * Actor logic for a step that computes its output at once (no I/O, nothing to abort). It acts
 * as a promise actor does, with the same snapshots, events and persisted form, and reports its
 * output or error to the machine the same way, but it does not create an AbortController and a
 * promise per run, or wait a microtask to report: a turn's steps run one after the other at once.
 */
export function fromComputation<TOutput, TInput>(
  compute: (input: TInput) => TOutput,
): PromiseActorLogic<TOutput, TInput> {
  const logic = {
    config: compute,
    transition: (state: PromiseSnapshot<TOutput, TInput>, event: Settled) => {
      if (state.status !== 'active') return state;
      switch (event.type) {
        // The input stays: a checkpoint can hold a step settled before its machine saw the
        // result, and such a step computes again when restored.
        case RESOLVE:
          return { ...state, status: 'done', output: event.data as TOutput };
        case REJECT:
          return { ...state, status: 'error', error: event.data };
        case 'xstate.stop':
          return { ...state, status: 'stopped', input: undefined };
        default:
          return state;
      }
    },
    // Runs when the actor starts (a restored one too, as a promise actor runs again). The
    // event waits in the actor's queue until it has started, then settles it.
    start: (state: PromiseSnapshot<TOutput, TInput>, { self }: { self: { send(e: Settled): void } }) => {
      if (state.status !== 'active') return;
      let settled: Settled;
      try {
        settled = { type: RESOLVE, data: compute(state.input as TInput) };
      } catch (error) {
        settled = { type: REJECT, data: error };
      }
      self.send(settled);
    },
    getInitialSnapshot: (_: unknown, input: TInput) => ({
      status: 'active',
      output: undefined,
      error: undefined,
      input,
    }),
    getPersistedSnapshot: (snapshot: PromiseSnapshot<TOutput, TInput>) => snapshot,
    // A step that settled before its machine took the result is run again, as a promise actor
    // in flight is (its machine only starts the children still active).
    restoreSnapshot: (snapshot: PromiseSnapshot<TOutput, TInput>) =>
      snapshot.status === 'done' || snapshot.status === 'error'
        ? { status: 'active', output: undefined, error: undefined, input: snapshot.input }
        : snapshot,
  };
  return logic as unknown as PromiseActorLogic<TOutput, TInput>;
}
