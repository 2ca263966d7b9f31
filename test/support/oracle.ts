import { expect } from '@jest/globals';
import {
  createActor,
  fromPromise,
  SimulatedClock,
  type AnyActorLogic,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
} from 'xstate';
import { deferred, settle, type Deferred } from './deferred.js';
import { leafPath, recorder } from '#src/testing/record-run.js';

/** What a fake actor does when it is invoked: finish with an output, fail, or never settle. */
export type Reply = { done: unknown } | { error: unknown } | 'hang';

/**
 * One row of an oracle table: a situation from VT Code's behaviour or the rules in
 * docs/architecture.md, written by hand, and what must happen. The rows never look at the
 * machine's own definition, so a machine that drifts from that behaviour disagrees with them.
 */
export interface OracleRow {
  /** Test name; cites the rule ids the row checks (glossed in docs/architecture.md). */
  name: string;
  input: unknown;
  /**
   * Replies of the fake actors, by actor name, in call order. Every actor that is not a
   * machine is a fake; a child machine named here is replaced by a fake too.
   */
  replies: Readonly<Record<string, readonly Reply[]>>;
  /** Sent once, when the machine waits on an actor whose reply is `hang`. */
  send?: EventObject;
  /** How long the machine must wait on its timer before it moves on (the clock is simulated). */
  waitMs?: number;
  expect: {
    /** The states the machine passes through, transient ones included, as dot paths. */
    states: readonly string[];
    /** Fake actors invoked, in order, across the whole actor system. */
    calls: readonly string[];
    /** Fields the machine's output must have. */
    output: Record<string, unknown>;
    /** Fields each call's input must have, per actor, in call order. */
    inputs?: Readonly<Record<string, readonly Record<string, unknown>[]>>;
    /** Calls whose signal was aborted (cancellation). */
    aborted?: readonly string[];
  };
}

/** One fake-actor invocation. */
export interface FakeCall {
  src: string;
  input: unknown;
  signal: AbortSignal;
  reply: Reply | undefined;
  deferred: Deferred<unknown>;
}

/** What running a row produced. */
export interface OracleRun {
  states: string[];
  calls: FakeCall[];
  status: string;
  output: unknown;
  /** Transition keys and state ids taken by every machine in the system (coverage). */
  transitions: Set<string>;
  stateIds: Set<string>;
  /** Events the root machine received: the row as steps, for the generated paths' oracles. */
  rootEvents: EventObject[];
  /** The actor that was waited on when the run crashed, and those a restore invoked again. */
  crashedCall?: string;
  reinvoked: string[];
}

/** Options of {@link runRow}. */
export interface RunRowOptions {
  /**
   * Crash in this root state: the first time the machine waits there on an actor, persist its
   * snapshot, round-trip it through JSON, stop it, restore it and continue.
   */
  crashIn?: string;
}

function isMachine(logic: AnyActorLogic): logic is AnyStateMachine {
  return typeof (logic as { provide?: unknown }).provide === 'function' && 'root' in logic;
}

/** The machine with every leaf actor (and every child machine named in `faked`) replaced by `fake`. */
function provideFakes(
  machine: AnyStateMachine,
  fake: (src: string) => AnyActorLogic,
  faked: ReadonlySet<string>,
): AnyStateMachine {
  const actors: Record<string, AnyActorLogic> = {};
  for (const [name, logic] of Object.entries(machine.implementations.actors as Record<string, AnyActorLogic>))
    actors[name] = isMachine(logic) && !faked.has(name) ? provideFakes(logic, fake, faked) : fake(name);
  return machine.provide({ actors } as never);
}

/** Fake actors that answer from the row's replies, recording every call. */
function fakeActors(row: OracleRow): { fake: (src: string) => AnyActorLogic; calls: FakeCall[] } {
  const queues = new Map(Object.entries(row.replies).map(([src, list]) => [src, [...list]]));
  const calls: FakeCall[] = [];
  const fake = (src: string) =>
    fromPromise<unknown, unknown>(({ input, signal }) => {
      const call: FakeCall = { src, input, signal, reply: queues.get(src)?.shift(), deferred: deferred() };
      calls.push(call);
      // A call cut short by a stop or a cancel gives its reply back for the next invocation.
      signal.addEventListener('abort', () => {
        if (!call.deferred.settled && call.reply !== undefined) queues.get(src)!.unshift(call.reply);
      });
      return call.deferred.promise;
    });
  return { fake, calls };
}

/** Settles a pending call with its scripted reply, or fails naming where the run got stuck. */
function answer(row: OracleRow, here: string, call: FakeCall): void {
  const reply = call.reply;
  if (reply === undefined || reply === 'hang')
    throw new Error(
      `${row.name}: stuck in ${here}; "${call.src}" was called and the row has no reply for it`,
    );
  if ('done' in reply) call.deferred.resolve(reply.done);
  else call.deferred.reject(reply.error);
}

/** Runs the timer out; the machine must still be waiting 1 ms before the delay ends. */
async function waitOut(row: OracleRow, here: string, actor: AnyActorRef, clock: SimulatedClock) {
  if (row.waitMs === undefined)
    throw new Error(`${row.name}: stuck in ${here} with no pending call and no waitMs`);
  if (row.waitMs > 0) {
    clock.increment(row.waitMs - 1);
    await settle();
    const early = leafPath((actor.getSnapshot() as AnyMachineSnapshot).value);
    if (early !== here) throw new Error(`${row.name}: left ${here} before ${row.waitMs} ms`);
  }
  clock.increment(row.waitMs > 0 ? 1 : 0);
}

/**
 * Runs the real machine along one oracle row: fake actors answer from the row's replies one
 * call at a time, the simulated clock advances only by the row's `waitMs`, and every state
 * and transition of every machine in the system is recorded.
 */
export async function runRow(
  machine: AnyStateMachine,
  row: OracleRow,
  options: RunRowOptions = {},
): Promise<OracleRun> {
  const { fake, calls } = fakeActors(row);
  const system = provideFakes(machine, fake, new Set(Object.keys(row.replies)));
  const run: OracleRun = {
    states: [],
    calls,
    status: 'active',
    output: undefined,
    transitions: new Set(),
    stateIds: new Set(),
    rootEvents: [],
    reinvoked: [],
  };
  const inspect = recorder(run);
  const clock = new SimulatedClock();
  let actor: AnyActorRef = createActor(system, { input: row.input, clock, inspect });
  actor.start();
  let sent = false;
  for (let step = 0; step < 200; step++) {
    await settle();
    const snapshot = actor.getSnapshot() as AnyMachineSnapshot;
    if (snapshot.status !== 'active') break;
    const here = leafPath(snapshot.value);
    const pending = calls.find((c) => !c.deferred.settled && !c.signal.aborted);
    if (pending && options.crashIn === here && run.crashedCall === undefined) {
      run.crashedCall = pending.src;
      const before = calls.length;
      const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
      actor.stop();
      actor = createActor(system, { snapshot: persisted, clock, inspect });
      actor.start();
      await settle();
      run.reinvoked.push(...calls.slice(before).map((c) => c.src));
    } else if (pending?.reply === 'hang' && row.send && !sent) {
      sent = true;
      actor.send(row.send);
    } else if (pending) answer(row, here, pending);
    else await waitOut(row, here, actor, clock);
  }
  const final = actor.getSnapshot() as AnyMachineSnapshot;
  run.status = final.status;
  run.output = final.output;
  actor.stop();
  if (options.crashIn !== undefined && run.crashedCall === undefined)
    throw new Error(`${row.name}: never waited in ${options.crashIn}`);
  return run;
}

/** Asserts that a run matches its row: states, calls, call inputs, aborts and output. */
export function expectRowMatched(run: OracleRun, row: OracleRow): void {
  const e = row.expect;
  expect(run.status).toBe('done');
  expect(run.states).toEqual(e.states);
  expect(run.calls.filter((c) => c.deferred.settled || c.reply === 'hang').map((c) => c.src)).toEqual(
    e.calls,
  );
  for (const [src, inputs] of Object.entries(e.inputs ?? {}))
    expect(run.calls.filter((c) => c.src === src && c.deferred.settled).map((c) => c.input)).toMatchObject(
      inputs,
    );
  if (e.aborted)
    expect(run.calls.filter((c) => c.signal.aborted && !c.deferred.settled).map((c) => c.src)).toEqual(
      e.aborted,
    );
  expect(run.output).toMatchObject(e.output);
}
