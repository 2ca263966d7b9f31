import { createRequire } from 'node:module';
import type { z } from 'zod';
import { PeerDependencyError, UserError } from '../core/errors.js';

/**
 * The part of `@restatedev/restate-sdk` this entry uses, and the one place that loads it.
 * The SDK is an optional peer dependency that needs Node 22 or newer: it is loaded at run
 * time (not imported statically), so the rest of the package keeps working on Node 20 and
 * without it, and this entry says plainly what is missing instead of failing on an import.
 */

/** What a handler of a virtual object may read. */
export interface ObjectSharedContext {
  readonly key: string;
  get<T>(name: string): Promise<T | null>;
  /** A step whose result is recorded: on a retry it is read back, not run again. */
  run<T>(name: string, action: () => Promise<T>): Promise<T>;
  /** A client of object `name`/`key` whose calls are recorded steps (`client.handler(input)`). */
  objectClient<C>(definition: { name: string }, key: string): C;
}

/** What an exclusive handler may also do: change the object's state. */
export interface ObjectContext extends ObjectSharedContext {
  set<T>(name: string, value: T): void;
  clear(name: string): void;
  /** The call's own request: the headers its caller sent. */
  request(): { readonly headers: ReadonlyMap<string, string> };
}

/** A service definition as `object()` returns it (opaque here). */
export type ServiceDefinition = { readonly name: string } & Record<string, unknown>;

/** The Node endpoint builder of the SDK. */
export interface RestateEndpoint {
  bind(definition: ServiceDefinition): RestateEndpoint;
  /** Serves over HTTP/2 on `port`; resolves with the port bound. */
  listen(port?: number): Promise<number>;
  /** A request handler for `http.createServer` (HTTP/1.1, request-response) or `http2.createServer`. */
  handler(options?: { bidirectional?: boolean }): (req: unknown, res: unknown) => void;
}

type Handler<C> = (ctx: C, input: never) => Promise<unknown>;

export interface RestateSdk {
  object(definition: {
    name: string;
    handlers: Record<string, unknown>;
    options?: Record<string, unknown>;
  }): ServiceDefinition;
  handlers: {
    object: {
      exclusive(fn: Handler<ObjectContext>): unknown;
      shared(fn: Handler<ObjectSharedContext>): unknown;
    };
  };
  endpoint(): RestateEndpoint;
  TerminalError: new (message: string, options?: { errorCode?: number }) => Error;
}

/** The lowest Node major the SDK runs on. */
export const MIN_NODE_MAJOR = 22;

let loaded: RestateSdk | undefined;

/** The SDK, loaded once; a clear one-line error on an old Node or when it is not installed. */
export function restateSdk(): RestateSdk {
  if (loaded) return loaded;
  const major = Number(process.versions.node.split('.')[0]);
  if (major < MIN_NODE_MAJOR)
    throw new PeerDependencyError(
      `context-compactor/restate needs Node ${MIN_NODE_MAJOR} or newer (the Restate SDK does); this is Node ${process.versions.node}`,
    );
  try {
    loaded = createRequire(import.meta.url)('@restatedev/restate-sdk') as RestateSdk;
  } catch (e) {
    throw new PeerDependencyError(
      `context-compactor/restate needs the package @restatedev/restate-sdk (npm install @restatedev/restate-sdk): ${(e as Error).message.split('\n')[0]}`,
      { cause: e },
    );
  }
  return loaded;
}

/** A user error (bad options, bad input, damaged state) fails the call for good: a retry cannot fix it. */
export function terminalOnUserError<T>(sdk: RestateSdk, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw forGoodIfUserError(sdk, e);
  }
}

/**
 * A user error (bad input, a window too small for the request) as an error Restate does not
 * retry: calling again would fail the same way forever. Other errors are returned as they are.
 */
export function forGoodIfUserError(sdk: RestateSdk, e: unknown): unknown {
  return UserError.isInstance(e) ? new sdk.TerminalError(e.message, { errorCode: 400 }) : e;
}

/**
 * Reads handlers' input for object `name`: checked against a schema (no body and `null` alike);
 * a bad one fails the call for good with one line naming the handler and the field.
 */
export function checkedInput(sdk: RestateSdk, name: string) {
  return <T>(schema: z.ZodType<T>, value: unknown, where: string): T => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join('.');
    throw new sdk.TerminalError(`${name}/${where}: input${path ? `.${path}` : ''}: ${issue.message}`, {
      errorCode: 400,
    });
  };
}
