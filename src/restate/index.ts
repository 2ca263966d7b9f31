/**
 * `context-compactor/restate`: Compactor sessions as a Restate virtual object, so a session
 * outlives the machine it started on (see the README's "Durable sessions on Restate").
 * Needs Node 22 or newer and the optional peer dependency `@restatedev/restate-sdk`; both are
 * checked when the object or endpoint is created, with a one-line error naming what is missing.
 */
export {
  compactorSession,
  endpoint,
  OBJECT_NAME,
  type CompactorSessionObjectOptions,
  type ObjectSessionOptions,
  type ObjectTurnResult,
  type ObjectSessionState,
} from './session-object.js';
export { MIN_NODE_MAJOR, type RestateEndpoint, type ServiceDefinition } from './sdk.js';
