/**
 * Ctrl-C and SIGTERM. A command that can stop cleanly (run, compact: the provider request is
 * aborted and the session directory rolled back) claims the interrupt; any other command is
 * ended at once, as without a handler. A second signal always ends the process at once.
 */

export type InterruptSignal = 'SIGINT' | 'SIGTERM';

/** The reason an interrupted command's signal carries. */
export class Interrupted extends Error {
  readonly signalName: InterruptSignal;
  constructor(signalName: InterruptSignal) {
    super(`interrupted by ${signalName}`);
    this.name = 'Interrupted';
    this.signalName = signalName;
  }
  /** 128 + the signal number, as shells report it: 130 (SIGINT), 143 (SIGTERM). */
  get exitCode(): number {
    return this.signalName === 'SIGINT' ? 130 : 143;
  }
}

/** What the dispatcher hands a command about interrupts. */
export interface Interrupts {
  /** Aborted (reason: {@link Interrupted}) on the first signal once claimed. */
  readonly signal: AbortSignal;
  /** The running command stops cleanly on `signal` instead of being ended at once. */
  claim(): void;
}

/** Throws the interruption when `signal` was aborted by one (call before recording anything). */
export function throwIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted && signal.reason instanceof Interrupted) throw signal.reason;
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
      exit(reason.exitCode);
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
