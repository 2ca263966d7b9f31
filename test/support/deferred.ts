/** A promise with its resolve/reject exposed, so a test decides when an actor finishes. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
  readonly settled: boolean;
}

/** Creates a {@link Deferred}. Unobserved rejections are swallowed (stopped actors drop their promise). */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  let settled = false;
  const promise = new Promise<T>((res, rej) => {
    resolve = (v) => {
      settled = true;
      res(v);
    };
    reject = (e) => {
      settled = true;
      rej(e);
    };
  });
  promise.catch(() => undefined);
  return {
    promise,
    resolve,
    reject,
    get settled() {
      return settled;
    },
  };
}

/** Lets promise callbacks and the actor's resulting events run (one macrotask). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
