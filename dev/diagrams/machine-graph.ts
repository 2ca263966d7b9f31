import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { toDirectedGraph } from 'xstate/graph';

/** A state node as the diagram writers see it. */
export interface DiagramState {
  /** Full id, e.g. `turn.working.syncing`. */
  id: string;
  key: string;
  kind: 'atomic' | 'compound' | 'final';
  /** The state's `description` from the machine, if any. */
  description?: string;
  /** Id of the initial child (compound states). */
  initial?: string;
  children: DiagramState[];
}

/** A transition: `always` edges are the eventless ones `toDirectedGraph` leaves out. */
export interface DiagramEdge {
  source: string;
  target: string;
  label: string;
  always: boolean;
  /** The transition's `description` from the machine, if any. */
  description?: string;
}

/** The whole statechart: root states and every edge, in config order. */
export interface DiagramGraph {
  id: string;
  /** The machine's own `description`. */
  description?: string;
  initial: string;
  states: DiagramState[];
  edges: DiagramEdge[];
}

/** Readable labels: `done: x`, `error: x`, `after retryBackoff`, `onDone`. */
export function eventLabel(type: string): string {
  if (type.startsWith('xstate.done.actor.')) return `done: ${type.slice('xstate.done.actor.'.length)}`;
  if (type.startsWith('xstate.error.actor.')) return `error: ${type.slice('xstate.error.actor.'.length)}`;
  if (type.startsWith('xstate.after.')) return `after ${type.split('.')[2]}`;
  if (type.startsWith('xstate.done.state.')) return 'onDone';
  return type;
}

function guardName(t: AnyTransitionDefinition): string | undefined {
  const g = t.guard as unknown;
  if (typeof g === 'string') return g;
  if (typeof g === 'object' && g !== null && 'type' in g) {
    const params = (g as { params?: unknown }).params;
    // Static params (e.g. the loop-guard reason) tell the branches apart; mapped params do not.
    const detail =
      params !== null && typeof params === 'object' && !Array.isArray(params)
        ? Object.values(params as Record<string, unknown>).filter((v) => typeof v === 'string')
        : [];
    return detail.length
      ? `${(g as { type: string }).type}: ${detail.join(', ')}`
      : (g as { type: string }).type;
  }
  return g === undefined ? undefined : 'guard';
}

function actionNames(t: AnyTransitionDefinition): string[] {
  return (t.actions as unknown[]).map((a) =>
    typeof a === 'string'
      ? a
      : typeof a === 'object' && a !== null && 'type' in a
        ? String(a.type)
        : 'action',
  );
}

/** Statechart notation: `event [guard] / action, action`. */
function edgeLabel(label: string, t: AnyTransitionDefinition): string {
  const guard = guardName(t);
  const actions = actionNames(t);
  return `${label}${guard ? ` [${guard}]` : ''}${actions.length ? ` / ${actions.join(', ')}` : ''}`;
}

function toState(node: AnyStateNode): DiagramState {
  const children = Object.values(node.states).map(toState);
  return {
    id: node.id,
    key: node.key,
    kind: node.type === 'final' ? 'final' : children.length > 0 ? 'compound' : 'atomic',
    description: node.description,
    initial: children.length > 0 ? node.initial?.target[0]?.id : undefined,
    children,
  };
}

/** Walks a machine into a {@link DiagramGraph} (toDirectedGraph edges plus `stateNode.always`). */
export function machineGraph(machine: AnyStateMachine): DiagramGraph {
  const edges: DiagramEdge[] = [];
  const visit = (node: AnyStateNode): void => {
    for (const t of node.always ?? [])
      for (const target of t.target ?? [])
        edges.push({
          source: node.id,
          target: target.id,
          label: edgeLabel('always', t),
          always: true,
          description: t.description,
        });
    for (const child of Object.values(node.states)) visit(child);
  };
  const walk = (g: ReturnType<typeof toDirectedGraph>): void => {
    for (const e of g.edges)
      edges.push({
        source: e.source.id,
        target: e.target.id,
        label: edgeLabel(eventLabel(e.transition.eventType), e.transition),
        always: false,
        description: e.transition.description,
      });
    g.children.forEach(walk);
  };
  walk(toDirectedGraph(machine));
  visit(machine.root);
  // Group edges by source in document order of the states (stable sort keeps config order within a state).
  const position = new Map<string, number>();
  const number = (node: AnyStateNode): void => {
    position.set(node.id, position.size);
    Object.values(node.states).forEach(number);
  };
  number(machine.root);
  edges.sort((a, b) => (position.get(a.source) ?? 0) - (position.get(b.source) ?? 0));
  return {
    id: machine.id,
    description: machine.root.description,
    initial: machine.root.initial?.target[0]?.id ?? '',
    states: Object.values(machine.root.states).map(toState),
    edges,
  };
}
