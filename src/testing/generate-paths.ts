import type { AnyMachineSnapshot, AnyStateMachine, AnyStateNode, EventObject, StateValue } from 'xstate';
import { getSimplePaths } from 'xstate/graph';
import type { MachinePath, Oracle, PathStep, Reply } from './path-types.js';
import { leafPath } from './record-run.js';
import { ModelPathError } from '../core/errors.js';

/**
 * What the graph walk may do with one machine: the inputs it starts from, and the answers
 * each invoked actor may give (one sample per kind of outcome). The walk itself decides, from
 * the machine's own graph, which of them can happen where.
 */
export interface PathModel {
  machine: AnyStateMachine;
  /** Named starting inputs. */
  inputs: Readonly<Record<string, unknown>>;
  /** Sample answers per invoked actor id. */
  replies: Readonly<Record<string, readonly Reply[]>>;
  /** Sample events sent from outside, per event type. */
  sends?: Readonly<Record<string, readonly EventObject[]>>;
  oracle: Oracle;
  /**
   * Safety net of the walk (xstate/graph's `limit`: adjacency-map iterations). The walk is
   * kept small by the few samples per outcome and the bounded retries of the inputs; this
   * fails loudly if a machine change makes it explode.
   */
  limit?: number;
}

/**
 * The event types the active states of `snapshot` handle, outermost state first: read from the
 * state nodes `snapshot.value` names (public `states` and `ownEvents`), not xstate's internal
 * list of active nodes.
 */
export function handledEventTypes(snapshot: AnyMachineSnapshot): string[] {
  const types = new Set<string>();
  const visit = (node: AnyStateNode, value: StateValue | undefined): void => {
    for (const type of node.ownEvents) types.add(type);
    if (typeof value === 'string') visit(node.states[value]!, undefined);
    else if (value) for (const [key, child] of Object.entries(value)) visit(node.states[key]!, child);
  };
  visit(snapshot.machine.root, snapshot.value);
  return [...types];
}

/** The samples of one event type the machine handles in `snapshot`. */
export function eventsAt(model: PathModel, snapshot: AnyMachineSnapshot): EventObject[] {
  return handledEventTypes(snapshot).flatMap((type): EventObject[] => {
    const actorEvent = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
    if (actorEvent) {
      const [, outcome, actor] = actorEvent as unknown as [string, 'done' | 'error', string];
      return (model.replies[actor] ?? []).flatMap(
        (r): Array<EventObject & { output?: unknown; error?: unknown; as?: string | undefined }> =>
          'done' in r && outcome === 'done'
            ? [{ type, output: r.done, as: r.as }]
            : 'error' in r && outcome === 'error'
              ? [{ type, error: r.error, as: r.as }]
              : [],
      );
    }
    if (type.startsWith('xstate.after.')) return [{ type }];
    // A compound state's own done event would skip its children; they are reached step by step.
    if (type.startsWith('xstate.done.state.')) return [];
    return [...(model.sends?.[type] ?? [])];
  });
}

/** A graph event (or one a machine received) as a path step. */
export function stepOf(event: EventObject): PathStep {
  const actorEvent = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event.type);
  if (actorEvent) {
    const e = event as EventObject & { output?: unknown; error?: unknown; as?: string };
    const reply: Reply = actorEvent[1] === 'done' ? { done: e.output } : { error: e.error };
    if (e.as !== undefined) reply.as = e.as;
    return { kind: 'reply', actor: actorEvent[2]!, reply };
  }
  if (event.type.startsWith('xstate.after.')) return { kind: 'wait' };
  return { kind: 'send', event: { ...event } };
}

/** Short label of a step for a path's name. */
export function stepLabel(step: PathStep): string {
  if (step.kind === 'wait') return 'wait';
  if (step.kind === 'send') return `send ${step.event.type}`;
  const r = step.reply;
  const text = r.as ?? JSON.stringify('done' in r ? r.done : r.error) ?? 'undefined';
  return `${step.actor} ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`;
}

/** The oracle's verdict; a walk the oracle holds impossible fails naming the path. */
function judged(oracle: Oracle, name: string, input: unknown, steps: PathStep[]) {
  try {
    return oracle(input, steps);
  } catch (error) {
    throw new ModelPathError(`${name}: the rules do not allow this path: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Every simple path of the machine from each input to a final state, walked by xstate/graph
 * with the model's actor answers as the events, each judged by the oracle.
 */
export function generatePaths(model: PathModel): MachinePath[] {
  const machineId = model.machine.id;
  const paths: MachinePath[] = [];
  for (const [inputName, input] of Object.entries(model.inputs)) {
    const walked = getSimplePaths(model.machine, {
      input,
      events: (snapshot) => eventsAt(model, snapshot as AnyMachineSnapshot),
      toState: (snapshot) => snapshot.status === 'done',
      limit: model.limit ?? 20_000,
    });
    for (const walk of walked) {
      const steps = walk.steps.slice(1).map((s) => stepOf(s.event));
      const name = `${machineId}: ${inputName}: ${steps.map(stepLabel).join(' → ')}`;
      paths.push({
        name,
        machine: machineId,
        inputName,
        input,
        steps,
        statesPassed: walk.steps.map((s) => leafPath((s.state as AnyMachineSnapshot).value)),
        expected: judged(model.oracle, name, input, steps),
      });
    }
  }
  return paths;
}
