import { fromPromise, type PromiseActorLogic } from 'xstate';

/**
 * A typed stand-in for an effectful actor (Kibana's `getPlaceholderFor` pattern). Machines
 * declare their actors with it so the definitions stay pure; src/runtime supplies the real
 * implementations through `machine.provide({ actors })`. Running a machine without providing
 * them fails loudly instead of doing I/O.
 */
export function placeholder<TOutput, TInput>(name: string): PromiseActorLogic<TOutput, TInput> {
  return fromPromise<TOutput, TInput>(() => Promise.reject(new Error(`actor "${name}" not provided`)));
}
