/**
 * `context-compactor/unstable/formats` (may change in any release): reads agent session files (provider request formats, agent
 * transcripts, the canonical document) into the message model, and writes them back.
 */
export {
  readSessionFile,
  parseSession,
  exportSession,
  detectFormat,
  selectSession,
  type FormatName,
  type ExportFormat,
  type ImportedSession,
  type ImportResult,
  type ExportOptions,
} from '../formats/index.js';
// The schemas that validate the message model every format is read into.
export {
  HistorySchema,
  RoleSchema,
  ContentPartSchema,
  ContentSchema,
  ToolCallSchema,
} from '../messages/message.js';

export { FORMATS } from '../formats/registry.js';
export type { SessionFormat } from '../formats/types.js';
export type { Detectable, DetectionRule } from '../formats/detect.js';
export { JsonDocument, type SessionText } from '../formats/json-text.js';
