import type { AnyActorLogic } from 'xstate';

/**
 * Actor logic that hands every call to the logic `get` returns at that moment: logic built
 * only when an actor of it starts, or the logic of the run a shared machine serves now.
 * Everything else (the machine's id, config and definition, which progress lines and the
 * inspector read) comes from `shape`, the same machine before its actors were provided.
 */
export function delegatedLogic<T extends AnyActorLogic>(shape: T, get: () => T): T {
  const calls: Pick<
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
  return Object.assign(Object.create(shape) as T, calls);
}
