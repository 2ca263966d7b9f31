/**
 * Ctrl-C and SIGTERM. A command that can stop cleanly (run, compact: the provider request is
 * aborted and the session directory rolled back) claims the interrupt; any other command is
 * ended at once, as without a handler. A second signal always ends the process at once.
 */

import { Interrupted, type InterruptSignal } from '../core/errors.js';
import { exitCodeOf } from './exit-codes.js';

export { Interrupted };

/** What the dispatcher hands a command about interrupts. */
export interface Interrupts {
  /** Aborted (reason: {@link Interrupted}) on the first signal once claimed. */
  readonly signal: AbortSignal;
  /** The running command stops cleanly on `signal` instead of being ended at once. */
  claim(): void;
}

/** Throws the interruption when `signal` was aborted by one (call before recording anything). */
export function throwIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted && Interrupted.isInstance(signal.reason)) throw signal.reason;
}

/** The one line an interrupted run prints. */
export function interruptedLine(e: Interrupted): string {
  return `compactor: ${e.message}: stopped; nothing of this run was recorded`;
}

/**
 * Installs the SIGINT/SIGTERM handlers for one CLI process. `exit` ends the process (tests of
 * this module pass their own); `stderr` gets the one line when the process ends at once.
 */
export function watchInterrupts(
  proc: Pick<NodeJS.Process, 'on' | 'off'> = process,
  exit: (code: number) => void = (code) => process.exit(code),
  stderr: NodeJS.WritableStream = process.stderr,
): Interrupts & { dispose(): void } {
  const controller = new AbortController();
  let claimed = false;
  const onSignal = (name: InterruptSignal) => {
    const reason = new Interrupted(name);
    if (!claimed || controller.signal.aborted) {
      stderr.write(`compactor: ${reason.message}\n`);
      exit(exitCodeOf(reason));
      return;
    }
    controller.abort(reason);
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  proc.on('SIGINT', onInt);
  proc.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    claim: () => void (claimed = true),
    dispose() {
      proc.off('SIGINT', onInt);
      proc.off('SIGTERM', onTerm);
    },
  };
}
