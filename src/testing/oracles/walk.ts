import type { Expected, PathStep } from '../path-types.js';
import { ModelPathError } from '../../core/errors.js';

/**
 * A small helper for writing an oracle as "in this state, this step leads there": the oracle
 * keeps its own notion of where the run is and fails on a step its rules do not allow.
 */
export class Walk<Facts> {
  readonly states: string[];
  readonly calls: string[] = [];
  constructor(
    public here: string,
    public facts: Facts,
  ) {
    this.states = [here];
  }

  /** Moves on, through any passing-through states, to `states.at(-1)`. */
  go(...states: string[]): void {
    this.states.push(...states);
    this.here = states.at(-1) ?? this.here;
  }

  /** The step as an actor answer from `actor`, or an error saying what the rules expected. */
  reply(step: PathStep, actor: string): { done: unknown } | { error: unknown } {
    if (step.kind !== 'reply' || step.actor !== actor)
      throw new ModelPathError(`in ${this.here} only ${actor} can answer, not ${describe(step)}`);
    this.calls.push(actor);
    return step.reply;
  }

  /** The step as a wait, or an error. */
  wait(step: PathStep): void {
    if (step.kind !== 'wait')
      throw new ModelPathError(`in ${this.here} the run waits, it does not see ${describe(step)}`);
  }

  /** The verdict, once every step is read. */
  verdict(finals: readonly string[], output: Record<string, unknown>, waitMs?: number): Expected {
    if (!finals.includes(this.here))
      throw new ModelPathError(`the steps end in ${this.here}, which is not an end`);
    return { states: this.states, calls: this.calls, output, ...(waitMs === undefined ? {} : { waitMs }) };
  }
}

function describe(step: PathStep): string {
  return step.kind === 'reply'
    ? `an answer from ${step.actor}`
    : step.kind === 'wait'
      ? 'a wait'
      : step.event.type;
}

/** A provider failure as the actors report it: `{ kind, inputTokens?, message }`. */
export interface ThrownFailure {
  kind?: string;
  inputTokens?: number;
  message?: string;
}

export const thrown = (r: { done: unknown } | { error: unknown }): ThrownFailure | null =>
  'error' in r ? ((r.error ?? {}) as ThrownFailure) : null;
