import type { AnyStateMachine } from 'xstate';
import { transitionKey } from '#src/testing/record-run.js';
import { getStateNodes, toDirectedGraph } from 'xstate/graph';

/*
 * The statechart's own inventory of states and transitions, for the coverage test: what the
 * oracle rows must reach. Nothing here decides what a machine should do.
 */

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
