import {
  createActor,
  fromPromise,
  SimulatedClock,
  type AnyActorLogic,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type AnyStateMachine,
} from 'xstate';
import { differenceOf } from './match.js';
import type { Expected, MachinePath, Oracle, PathStep, Reply } from './path-types.js';
import { leafPath, recorder, type RunRecord } from './record-run.js';
import { ModelPathError } from '../core/errors.js';

/**
 * Your own implementation of an actor a machine invokes. `expected` is the answer the path
 * needs from this call, so a test can set up its provider stub or store accordingly.
 */
export type OwnActor = (
  input: unknown,
  context: { signal: AbortSignal; expected: Reply | undefined },
) => Promise<unknown>;

/** Options of `runPath`. */
export interface RunPathOptions {
  /** Your own actors by name; every other actor answers as the path says. */
  actors?: Readonly<Record<string, OwnActor>>;
}

/** What a path's run did. */
export interface PathRun extends RunRecord {
  calls: string[];
  /** The steps as they happened (your actors' real answers in place of the path's). */
  steps: PathStep[];
  output: unknown;
  /** The oracle's verdict for the steps that happened. */
  expected: Expected;
}

interface Call {
  actor: string;
  input: unknown;
  signal: AbortSignal;
  /** Your actor's own answer, when you gave one for this actor. */
  own: Promise<Reply> | null;
  /** Hands the answer to the machine; held back until the runner reaches the call's step. */
  release: (reply: Reply) => void;
  done: boolean;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Every invoked actor replaced: yours where given, otherwise one the runner answers. */
function providedMachine(
  machine: AnyStateMachine,
  options: RunPathOptions,
  path: MachinePath,
  calls: Call[],
) {
  const expectedOf = new Map<string, Reply[]>();
  for (const s of path.steps)
    if (s.kind === 'reply') expectedOf.set(s.actor, [...(expectedOf.get(s.actor) ?? []), s.reply]);
  const actors: Record<string, AnyActorLogic> = {};
  for (const name of Object.keys(machine.implementations.actors)) {
    const own = options.actors?.[name];
    actors[name] = fromPromise<unknown, unknown>(({ input, signal, self }) => {
      const expected = expectedOf.get(self.id)?.shift();
      let release!: (reply: Reply) => void;
      const gate = new Promise<Reply>((resolve) => (release = resolve));
      const answered = own?.(input, { signal, expected }).then(
        (done): Reply => ({ done }),
        (error: unknown): Reply => ({ error }),
      );
      calls.push({ actor: self.id, input, signal, own: answered ?? null, release, done: false });
      return gate.then((r) => ('done' in r ? r.done : Promise.reject(r.error)));
    });
  }
  return machine.provide({ actors } as never);
}

/** A value for an error message: an Error by its message, anything else as JSON. */
const shown = (value: unknown) => (value instanceof Error ? value.message : JSON.stringify(value));

function fail(path: MachinePath, message: string): never {
  throw new ModelPathError(`${path.name}\n  ${message}`);
}

/** Answers the pending call of a reply step and returns what was really answered. */
async function answer(
  path: MachinePath,
  i: number,
  step: PathStep & { kind: 'reply' },
  calls: Call[],
  here: string,
) {
  const call = calls.find((c) => !c.done && !c.signal.aborted && c.actor === step.actor);
  if (!call) fail(path, `step ${i + 1}: the machine waits in ${here} and did not call ${step.actor}`);
  call.done = true;
  const real = call.own ? await call.own : step.reply;
  if ('done' in real !== 'done' in step.reply)
    fail(
      path,
      `step ${i + 1}: ${step.actor} ${'done' in real ? 'finished' : 'failed'} where the path needs it to ${'done' in step.reply ? 'finish' : 'fail'}: ${shown('done' in real ? real.done : real.error)}`,
    );
  call.release(real);
  return real;
}

/**
 * Gives the machine the path's steps one at a time, recording what really happened; stops
 * early when the machine ends (your own actor may have led it elsewhere).
 */
async function drive(path: MachinePath, actor: AnyActorRef, calls: Call[], clock: SimulatedClock) {
  const steps: PathStep[] = [];
  for (const [i, step] of path.steps.entries()) {
    await tick();
    const snapshot = actor.getSnapshot() as AnyMachineSnapshot;
    const here = leafPath(snapshot.value);
    if (snapshot.status !== 'active') break;
    if (step.kind === 'reply') steps.push({ ...step, reply: await answer(path, i, step, calls, here) });
    else {
      steps.push(step);
      if (step.kind === 'send') actor.send(step.event);
      else await waitOut(path, i, actor, clock, here);
    }
  }
  await tick();
  return steps;
}

/** The oracle's verdict on what happened; steps the rules do not allow fail the path. */
function verdictOn(path: MachinePath, oracle: Oracle, steps: PathStep[]): Expected {
  try {
    return oracle(path.input, steps);
  } catch (error) {
    return fail(path, `the rules do not allow what happened: ${(error as Error).message}`);
  }
}

/**
 * Drives the real machine along one path: each actor answers as the path says (yours answer
 * for real), the simulated clock runs out each wait, and the oracle judges the steps that
 * happened. Throws a plain Error naming the path and the first difference.
 */
export async function runPathOn(
  machine: AnyStateMachine,
  path: MachinePath,
  oracle: Oracle,
  options: RunPathOptions = {},
): Promise<PathRun> {
  const calls: Call[] = [];
  const record: RunRecord = { states: [], transitions: new Set(), stateIds: new Set() };
  const clock = new SimulatedClock();
  const actor = createActor(providedMachine(machine, options, path, calls), {
    input: path.input,
    clock,
    inspect: recorder(record),
  });
  actor.start();
  try {
    const steps = await drive(path, actor, calls, clock);
    const final = actor.getSnapshot() as AnyMachineSnapshot;
    if (final.status !== 'done')
      fail(path, `after the last step the machine still waits in ${leafPath(final.value)}`);
    const expected = verdictOn(path, oracle, steps);
    const run = { ...record, calls: calls.map((c) => c.actor), steps, output: final.output, expected };
    judge(path, run);
    return run;
  } finally {
    actor.stop();
  }
}

/** Runs the timer out; the machine must still be waiting 1 ms before the oracle's delay ends. */
async function waitOut(
  path: MachinePath,
  i: number,
  actor: AnyActorRef,
  clock: SimulatedClock,
  here: string,
) {
  const ms = path.expected.waitMs ?? 0;
  if (ms > 0) {
    clock.increment(ms - 1);
    await tick();
    if (leafPath((actor.getSnapshot() as AnyMachineSnapshot).value) !== here)
      fail(path, `step ${i + 1}: left ${here} before ${ms} ms`);
  }
  clock.increment(ms > 0 ? 1 : 0);
}

/** Compares a run with the oracle's verdict. */
function judge(path: MachinePath, run: PathRun): void {
  const e = run.expected;
  const problem =
    differenceOf(run.states, e.states, 'states') ??
    differenceOf(run.calls, e.calls, 'calls') ??
    differenceOf(run.output, e.output, 'output') ??
    differenceOf(e.states, path.expected.states, 'states the path needs (your actors led elsewhere)');
  if (problem !== null) fail(path, problem);
}
