/**
 * Compactor's package entry (`import … from 'context-compactor'`): a session to embed in an
 * agent loop, the message model it speaks, the errors it throws and the types its options and
 * results are made of, and the token estimator. Stable beside it: the framework adapters,
 * `/serve`, `/restate` and `/testing`. The building blocks under the session are under
 * `context-compactor/unstable/...` and may change in any release.
 */

// The session.
export { createCompactorSession } from './session/session.js';
export type {
  CompactorSession,
  CompactOptions,
  CompactionToCommit,
  PrepareRequestOptions,
  PreparedRequest,
  SessionTurnOptions,
  SessionTurnResult,
} from './session/session-types.js';
export type { CompactorSessionOptions, SessionLimits, CompactionSettings } from './session/options.js';
export type { SessionRoute } from './session/route.js';
export type { RouteOptions } from './providers/catalog.js';
export type { RequestEnvelope } from './session/parent-context.js';
export type { SessionCompactionReport } from './session/report.js';
export type { Receipt } from './summary/receipt.js';
export type { CacheHealthState, CacheUsage } from './session/cache-health.js';
export { openSessionRecords, type StoreWrites } from './session/stored-history.js';
export { createJsonlInspector } from './runtime/inspection.js';

// The message model.
export {
  MessageSchema,
  msg,
  textOf,
  type Message,
  type History,
  type ToolCall,
  type Content,
  type ContentPart,
  type Role,
  type Json,
} from './messages/message.js';
export type { ToolSchema } from './providers/types.js';

// Counting tokens the way the session does.
export {
  createEstimator,
  freeEncoders,
  type Estimator,
  type EstimatorOptions,
  type EncodingName,
  type TokenCounter,
  type AnchoredPressure,
} from './estimate/index.js';

// Errors.
export {
  CompactorError,
  UserError,
  CompactorOptionsError,
  StoredSessionConflictError,
  WindowTooSmallError,
  SessionBusyError,
  ProviderError,
  ContextCapacityError,
  RouteError,
} from './core/errors.js';
