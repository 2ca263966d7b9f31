import type { AnyActorRef, Snapshot } from 'xstate';

/** Runs an actor to its output, checkpointing every snapshot and cancelling on abort. */
export function runToOutput<T>(
  actor: AnyActorRef,
  signal: AbortSignal | undefined,
  /** Cancels the actor; a returned error rejects the run instead of waiting for the output. */
  onAbort: () => unknown,
  onSnapshot: (s: Snapshot<unknown>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => {
      const error = onAbort();
      if (error !== undefined) reject(error);
    };
    let failed = false;
    const subscription = actor.subscribe({
      next: (s: Snapshot<unknown> & { output?: unknown }) => {
        if (failed) return;
        try {
          onSnapshot(s);
        } catch (e) {
          // A failed checkpoint ends the run: stop the actor so no provider call keeps going
          // (stopping aborts the in-flight actors' signals) and nothing retries the write.
          failed = true;
          signal?.removeEventListener('abort', abort);
          queueMicrotask(() => {
            subscription.unsubscribe();
            actor.stop();
          });
          reject(e);
          return;
        }
        if (s.status === 'done') {
          signal?.removeEventListener('abort', abort);
          resolve(s.output as T);
        }
      },
      error: (e: unknown) => {
        signal?.removeEventListener('abort', abort);
        reject(e);
      },
    });
    // Cancelled before the start, so a run whose steps all compute at once (it ends inside
    // start()) still ends cancelled; a run cancelled by an error is never started.
    if (signal?.aborted) {
      const error = onAbort();
      if (error !== undefined) {
        subscription.unsubscribe();
        reject(error);
        return;
      }
    } else signal?.addEventListener('abort', abort, { once: true });
    actor.start();
  });
}
