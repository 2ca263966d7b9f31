import {
  __unsafe_getAllOwnEventDescriptors,
  createActor,
  fromPromise,
  SimulatedClock,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyTransitionDefinition,
  type EventObject,
  type InspectionEvent,
  type StateValue,
} from 'xstate';
import { getStateNodes, TestModel, toDirectedGraph, type StatePath } from 'xstate/graph';
import { deferred, settle, type Deferred } from './deferred.js';

/** One invocation of a stubbed actor: what it got and how the test finishes it. */
export interface ActorCall {
  src: string;
  input: unknown;
  signal: AbortSignal;
  deferred: Deferred<unknown>;
}

/** Stub actors keyed by name; every invocation is recorded in `calls`. */
export interface DeferredActors {
  actors: Record<string, ReturnType<typeof fromPromise<unknown, unknown>>>;
  calls: ActorCall[];
  /** The newest unsettled call of `src` (the one an in-flight state is waiting on). */
  pending(src: string): ActorCall | undefined;
}

/** Builds deferred `fromPromise` stubs for the given actor names. */
export function createDeferredActors(names: readonly string[]): DeferredActors {
  const calls: ActorCall[] = [];
  const actors: DeferredActors['actors'] = {};
  for (const src of names)
    actors[src] = fromPromise<unknown, unknown>(({ input, signal }) => {
      const d = deferred<unknown>();
      calls.push({ src, input, signal, deferred: d });
      return d.promise;
    });
  return {
    actors,
    calls,
    pending: (src) =>
      [...calls].reverse().find((c) => c.src === src && !c.deferred.settled && !c.signal.aborted),
  };
}

/**
 * A machine's test model: payload samples for synthetic and domain events, a projection of
 * snapshots onto the bounded fields that define "the same state", and inputs to explore.
 * Samples are plain objects: the synthetic `xstate.*` types are outside the machine's event
 * union, which is why this helper (and only it) erases the event type.
 */
export interface MachineModel {
  machine: AnyStateMachine;
  /** Names of every actor the machine invokes (all stubbed in the SUT). */
  actorNames: readonly string[];
  samples: Record<string, ReadonlyArray<Record<string, unknown>>>;
  project(snapshot: AnyMachineSnapshot): Record<string, unknown>;
  /** Each input is explored separately; coverage is the union. */
  inputs: ReadonlyArray<{ name: string; input: unknown }>;
  /** Milliseconds a named delay takes in `snapshot` (for `xstate.after.*` steps). */
  delayMs?(delay: string, snapshot: AnyMachineSnapshot): number;
}

type Snap = AnyMachineSnapshot;
type Path = StatePath<Snap, EventObject>;

/** The recipe of xstate.md §A2.5: `new TestModel` with own event samples and a projecting key. */
export function testModelFor(model: MachineModel): TestModel<Snap, EventObject, unknown> {
  return new TestModel<Snap, EventObject, unknown>(model.machine as never, {
    events: (snapshot: Snap) =>
      __unsafe_getAllOwnEventDescriptors(snapshot)
        .filter((type) => !type.startsWith('xstate.done.state.'))
        .flatMap((type) => (model.samples[type] ?? [{}]).map((s) => ({ ...s, type }) as EventObject)),
    serializeState: (snapshot: Snap) =>
      JSON.stringify({ status: snapshot.status, ...model.project(snapshot) }),
    stateMatcher: (_: Snap, key: string) => key === '*',
  });
}

/** Shortest paths to every projected state, for each input of the model. */
export function pathsFor(
  model: MachineModel,
): Array<{ input: { name: string; input: unknown }; path: Path }> {
  const tm = testModelFor(model);
  return model.inputs.flatMap((input) =>
    tm.getShortestPaths({ input: input.input }).map((path) => ({ input, path: path as Path })),
  );
}

/** A short, stable description of a path: `init → done: syncHistory → …`. */
export function describePath(path: Path): string {
  const label = (e: EventObject): string => {
    const payload = { ...(e as Record<string, unknown>) };
    delete payload.type;
    const detail = JSON.stringify(payload.output ?? payload.error ?? {});
    const short = detail === '{}' ? '' : ` ${detail.length > 40 ? `${detail.slice(0, 37)}...` : detail}`;
    return `${eventLabel(e.type)}${short}`;
  };
  return path.steps.map((s) => label(s.event)).join(' → ');
}

/** Readable event labels shared with the diagrams: `done: x`, `error: x`, `after d`. */
export function eventLabel(type: string): string {
  if (type === 'xstate.init') return 'init';
  if (type.startsWith('xstate.done.actor.')) return `done: ${type.slice('xstate.done.actor.'.length)}`;
  if (type.startsWith('xstate.error.actor.')) return `error: ${type.slice('xstate.error.actor.'.length)}`;
  if (type.startsWith('xstate.after.')) return `after ${type.split('.')[2]}`;
  return type;
}

/** What running one path against a real actor produced. */
export interface PathRun {
  actor: AnyActorRef;
  stubs: DeferredActors;
  /** Calls made after each crash/restore, by src (persistence checks). */
  reinvoked: string[];
  transitions: Set<string>;
}

/** Options of {@link runPath}. */
export interface RunOptions {
  /** After these step indexes: persist, JSON round-trip, restore and continue. */
  crashAfter?: ReadonlySet<number>;
  /** Called after each step with the live actor and the stubs (extra assertions). */
  afterStep?(index: number, actor: AnyActorRef, stubs: DeferredActors): void;
}

/**
 * Executes a model path against a real actor built from the machine with every actor stubbed
 * by a deferred, under a SimulatedClock; after every step the actor's projection must equal
 * the model's. `xstate.done/error.actor.<id>` settle the pending stub of that actor (which
 * must exist: the SUT really invoked it); `xstate.after.*` advances the clock.
 */
export async function runPath(
  model: MachineModel,
  input: unknown,
  path: Path,
  options: RunOptions = {},
): Promise<PathRun> {
  const stubs = createDeferredActors(model.actorNames);
  const machine = model.machine.provide({ actors: stubs.actors });
  const clock = new SimulatedClock();
  const transitions = new Set<string>();
  const inspect = (e: InspectionEvent): void => {
    if (e.type === '@xstate.microstep' && isRoot(e))
      for (const t of e._transitions) transitions.add(transitionKey(t));
  };
  let actor: AnyActorRef = createActor(machine, { input, clock, inspect });
  const reinvoked: string[] = [];
  const project = (s: Snap) => JSON.stringify({ status: s.status, ...model.project(s) });
  let previous: Snap | undefined;
  for (const [index, step] of path.steps.entries()) {
    const type = step.event.type;
    const event = step.event as EventObject & { output?: unknown; error?: unknown };
    if (type === 'xstate.init') actor.start();
    else if (type.startsWith('xstate.done.actor.') || type.startsWith('xstate.error.actor.')) {
      const id = type.split('.').slice(3).join('.');
      const call = stubs.pending(id);
      if (!call) throw new Error(`step ${index} (${type}): the actor under test has no pending "${id}" call`);
      if (type.startsWith('xstate.done.actor.')) call.deferred.resolve(event.output);
      else call.deferred.reject(event.error);
    } else if (type.startsWith('xstate.after.')) {
      const delay = type.split('.')[2] ?? '';
      const ms = model.delayMs?.(delay, previous as Snap) ?? Number(delay);
      clock.increment(ms);
    } else actor.send(step.event);
    await settle();
    await settle();
    const actual = project(actor.getSnapshot() as Snap);
    const expected = project(step.state);
    if (actual !== expected)
      throw new Error(`step ${index} (${eventLabel(type)}): actor is ${actual}, model expects ${expected}`);
    options.afterStep?.(index, actor, stubs);
    if (options.crashAfter?.has(index) && step.state.status === 'active') {
      const before = stubs.calls.length;
      const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
      actor.stop();
      actor = createActor(machine, { snapshot: persisted, clock, inspect });
      actor.start();
      await settle();
      reinvoked.push(...stubs.calls.slice(before).map((c) => c.src));
      const restored = project(actor.getSnapshot() as Snap);
      if (restored !== expected) throw new Error(`restored actor is ${restored}, expected ${expected}`);
    }
    previous = step.state;
  }
  return { actor, stubs, reinvoked, transitions };
}

/** Whether an inspection event is about the root actor (children's microsteps are not counted). */
function isRoot(e: InspectionEvent): boolean {
  return e.actorRef.sessionId === e.rootId;
}

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

/**
 * Replays paths on an actor whose invoked actors never settle, sending the synthetic events
 * directly, and records every state entered and transition taken (transient `always` hops
 * included, via `@xstate.microstep`). Pure and fast: used by the coverage tests.
 */
export function coverageOf(
  model: MachineModel,
  paths: ReadonlyArray<{ input: { input: unknown }; path: Path }>,
) {
  const states = new Set<string>();
  const transitions = new Set<string>();
  const never = Object.fromEntries(
    model.actorNames.map((n) => [n, fromPromise(() => new Promise<never>(() => {}))]),
  );
  const machine = model.machine.provide({ actors: never });
  for (const { input, path } of paths) {
    const inspect = (e: InspectionEvent): void => {
      if (e.type !== '@xstate.microstep' || !isRoot(e)) return;
      for (const t of e._transitions) {
        transitions.add(transitionKey(t));
        states.add(t.source.id); // transient sources never show in a settled snapshot
      }
      for (const id of activeStateIds(machine.id, (e.snapshot as Snap).value)) states.add(id);
    };
    const actor = createActor(machine, { input: input.input, clock: new SimulatedClock(), inspect });
    actor.start();
    for (const id of activeStateIds(machine.id, actor.getSnapshot().value)) states.add(id);
    for (const step of path.steps.slice(1)) actor.send(step.event);
    actor.stop();
  }
  return { states, transitions };
}
