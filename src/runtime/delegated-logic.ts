import type { AnyActorLogic } from 'xstate';

/**
 * Actor logic that hands every call to the logic `get` returns at that moment: logic built
 * only when an actor of it starts, or the logic of the run a shared machine serves now.
 */
export function delegatedLogic<T extends AnyActorLogic>(get: () => T): T {
  const logic: Pick<
    AnyActorLogic,
    'transition' | 'start' | 'getInitialSnapshot' | 'restoreSnapshot' | 'getPersistedSnapshot'
  > = {
    transition: (snapshot, event, scope) => get().transition(snapshot, event, scope),
    start: (snapshot, scope) => get().start?.(snapshot, scope),
    getInitialSnapshot: (scope, input) => get().getInitialSnapshot(scope, input),
    restoreSnapshot: (snapshot, scope) => {
      const real = get();
      return real.restoreSnapshot ? real.restoreSnapshot(snapshot, scope) : snapshot;
    },
    getPersistedSnapshot: (snapshot, options) => get().getPersistedSnapshot(snapshot, options),
  };
  return logic as unknown as T;
}
