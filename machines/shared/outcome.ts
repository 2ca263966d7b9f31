import type { DoneStateEvent } from 'xstate';

/**
 * The final state a machine stopped in, read from the done-state event that the machine's
 * `output` mapper receives (`xstate.done.state.compaction.failed` → `failed`). Outcomes live
 * in final states rather than in a context field, so the diagram shows every way a machine
 * can end and the output cannot disagree with the state.
 */
export function finalStateOf<T extends string>(event: DoneStateEvent, finals: readonly T[]): T {
  const key = event.type.slice(event.type.lastIndexOf('.') + 1);
  const found = finals.find((f) => f === key);
  if (found === undefined)
    throw new Error(`"${event.type}" is not one of the final states ${finals.join(', ')}`);
  return found;
}
