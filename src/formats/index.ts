/**
 * Importers, exporters and format detection. Everything other modules need
 * from src/formats is exported here.
 */
export type { ExportFormat, ImportedSession, ImportResult } from './types.js';
export { EXPORT_FORMATS } from './types.js';
export { FORMAT_NAMES, detectFormat, parseFormatName, type FormatName } from './registry.js';
export { parseSession, readSessionFile } from './parse-session.js';
export { selectSession } from './select-session.js';
export {
  exportSession,
  defaultExportFormat,
  parseExportFormat,
  type ExportOptions,
} from './export-session.js';
export { MAX_SESSION_FILE_BYTES } from './read-file.js';
export { CANONICAL_FORMAT, CANONICAL_VERSION } from './canonical.js';
export { importedResponsesItems } from './openai-responses.js';
export { requestEnvelopeOf, type FileRequestEnvelope } from './request-envelope.js';
