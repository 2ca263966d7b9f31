/** How a fake (or your own) actor answers one call: it finishes with an output or fails. */
export type Reply = ({ done: unknown } | { error: unknown }) & {
  /** A short name of the answer, for path names. */
  as?: string;
};

/**
 * One step of a path: an invoked actor answers, the machine's timer runs out, or an event
 * is sent from outside (a cancel).
 */
export type PathStep =
  | { kind: 'reply'; actor: string; reply: Reply }
  | { kind: 'wait' }
  | { kind: 'send'; event: { type: string } & Record<string, unknown> };

/** What the oracle expects of a run: written from the rules, never read from the machine. */
export interface Expected {
  /** The states the machine passes through, passing-through ones included, as dot paths. */
  states: string[];
  /** The actors called, in order. */
  calls: string[];
  /** Fields the machine's output must have (other fields are not checked). */
  output: Record<string, unknown>;
  /** How long the machine waits at each `wait` step, in milliseconds. */
  waitMs?: number;
}

/** The oracle of one machine: given an input and the steps of a run, what must happen. */
export type Oracle = (input: unknown, steps: readonly PathStep[]) => Expected;

/** One generated path of one machine, as plain data. */
export interface MachinePath {
  /** `<machine>: <input name>: step → step → …`, unique within the machine. */
  name: string;
  machine: string;
  inputName: string;
  input: unknown;
  steps: PathStep[];
  /** The settled states the graph walk passed, in order (passing-through states left out). */
  statesPassed: string[];
  /** The oracle's verdict for these steps. */
  expected: Expected;
}
