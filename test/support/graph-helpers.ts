import type { AnyStateMachine, AnyTransitionDefinition, StateValue } from 'xstate';
import { getStateNodes, toDirectedGraph } from 'xstate/graph';

/*
 * The statechart's own inventory of states and transitions, for the coverage test: what the
 * oracle rows must reach. Nothing here decides what a machine should do.
 */

/** A stable key of a transition: source id, event type and its index among that event's candidates. */
export function transitionKey(t: AnyTransitionDefinition): string {
  const source = t.source;
  const candidates = t.eventType === '' ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? []);
  const index = candidates.indexOf(t);
  const targets = (t.target ?? []).map((n) => n.id).join(',');
  return `${source.id} --${t.eventType === '' ? 'always' : t.eventType}[${index}]--> ${targets}`;
}

/** Every transition of a machine: `toDirectedGraph` edges plus the `always` edges it omits. */
export function allTransitionKeys(machine: AnyStateMachine): Set<string> {
  const keys = new Set<string>();
  const walk = (node: ReturnType<typeof toDirectedGraph>): void => {
    for (const edge of node.edges) keys.add(transitionKey(edge.transition));
    node.children.forEach(walk);
  };
  walk(toDirectedGraph(machine));
  for (const node of getStateNodes(machine.root))
    for (const t of node.always ?? []) keys.add(transitionKey(t));
  for (const t of machine.root.always ?? []) keys.add(transitionKey(t));
  return keys;
}

/** Ids of every state node of a machine (root excluded). */
export function allStateIds(machine: AnyStateMachine): Set<string> {
  return new Set(getStateNodes(machine.root).map((n) => n.id));
}

/** Ids of the state nodes active in a state value (parents included). */
export function activeStateIds(machineId: string, value: StateValue): string[] {
  if (typeof value === 'string') return [`${machineId}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => [
    `${machineId}.${key}`,
    ...(child === undefined ? [] : activeStateIds(`${machineId}.${key}`, child)),
  ]);
}
