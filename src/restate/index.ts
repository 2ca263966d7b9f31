/**
 * `context-compactor/restate`: Compactor sessions as a Restate virtual object, so a session
 * outlives the machine it started on (see the README's "Durable sessions on Restate").
 * The object and endpoint need Node 22 or newer and the optional peer dependency
 * `@restatedev/restate-sdk` (checked when they are created, with a one-line error naming what
 * is missing); `restateStore`, a client over the ingress, runs anywhere.
 */
export {
  compactorSession,
  compactorSessionArchive,
  compactorConversation,
  endpoint,
  OBJECT_NAME,
  type CompactorSessionObjectOptions,
  type ObjectSessionOptions,
  type ObjectTurnResult,
  type ObjectSessionState,
} from './session-object.js';
export type { InFlightTurnView } from './in-flight-turn.js';
export { restateStore, type RestateStore, type RestateStoreOptions } from './restate-store.js';
export { MIN_NODE_MAJOR, type RestateEndpoint, type ServiceDefinition } from './sdk.js';
