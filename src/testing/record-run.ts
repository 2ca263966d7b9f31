import type {
  AnyMachineSnapshot,
  AnyTransitionDefinition,
  EventObject,
  InspectionEvent,
  StateValue,
} from 'xstate';

/** What an inspected run went through. */
export interface RunRecord {
  /** The root machine's states in order, passing-through ones included, as dot paths. */
  states: string[];
  /** Transition keys and state ids taken by every machine in the system (for coverage). */
  transitions: Set<string>;
  stateIds: Set<string>;
  /** Events the root machine received (actor answers, timers, sends), when asked for. */
  rootEvents?: EventObject[];
}

/** `{ working: 'syncing' }` → `working.syncing`. */
export function leafPath(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value)[0]!;
  return child === undefined ? key : `${key}.${leafPath(child as StateValue)}`;
}

/** A stable key of a transition: source id, event type and its index among that event's candidates. */
export function transitionKey(t: AnyTransitionDefinition): string {
  const source = t.source;
  const candidates = t.eventType === '' ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? []);
  const index = candidates.indexOf(t);
  const targets = (t.target ?? []).map((n) => n.id).join(',');
  return `${source.id} --${t.eventType === '' ? 'always' : t.eventType}[${index}]--> ${targets}`;
}

/** Ids of the state nodes active in a state value (parents included). */
export function activeStateIds(machineId: string, value: StateValue): string[] {
  if (typeof value === 'string') return [`${machineId}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => [
    `${machineId}.${key}`,
    ...(child === undefined ? [] : activeStateIds(`${machineId}.${key}`, child)),
  ]);
}

/**
 * An inspection observer that records, into `run`, the root machine's states in order
 * (passing-through ones included, which a settled snapshot never shows) and the transitions
 * and states of every machine in the system.
 */
export function recorder(run: RunRecord): (e: InspectionEvent) => void {
  const push = (path: string) => {
    if (run.states.at(-1) !== path) run.states.push(path);
  };
  return (e) => {
    if (e.type === '@xstate.event' && e.actorRef.sessionId === e.rootId) run.rootEvents?.push(e.event);
    const snapshot = (e as { snapshot?: AnyMachineSnapshot }).snapshot;
    const machineId = snapshot?.machine?.id;
    if (snapshot === undefined || machineId === undefined) return;
    const root = e.actorRef.sessionId === e.rootId;
    if (e.type === '@xstate.microstep') {
      for (const t of e._transitions) {
        run.transitions.add(transitionKey(t));
        run.stateIds.add(t.source.id);
        if (root && run.states.length === 0) push(t.source.id.slice(machineId.length + 1));
      }
      if (root && e._transitions.length > 0) push(leafPath(snapshot.value));
    } else if (e.type === '@xstate.snapshot' && root && run.states.length === 0)
      push(leafPath(snapshot.value));
    if (e.type === '@xstate.microstep' || e.type === '@xstate.snapshot')
      for (const id of activeStateIds(machineId, snapshot.value)) run.stateIds.add(id);
  };
}
