import type { Message } from '../messages/message.js';
import type { Detectable } from './detect.js';
import type { JsonDocument } from './json-text.js';
import type { FormatName } from './registry.js';

/** Every input format the importers understand: the names in the registry. */
export type { FormatName };

/** The formats a session can be written back to. */
export type ExportFormat = 'canonical' | 'openai-chat' | 'openai-responses' | 'anthropic';

/** All export format names. */
export const EXPORT_FORMATS: readonly ExportFormat[] = [
  'canonical',
  'openai-chat',
  'openai-responses',
  'anthropic',
];

/** One conversation found in an input file. `meta` holds source facts (ids, model, sidechain flags …). */
export interface ImportedSession {
  id: string;
  messages: Message[];
  meta: Record<string, unknown>;
}

/** What an importer returns: the detected format and every session in the input. */
export interface ImportResult {
  format: FormatName;
  file?: string;
  sessions: ImportedSession[];
}

/**
 * One input format: its name, how to recognise it (rules beside its parser, run by detect.ts)
 * and its importer. The registry lists every format.
 */
export interface SessionFormat<N extends string = string> extends Detectable<N> {
  import(text: string, fileName?: string): ImportResult;
  /** Formats that are one JSON document also import one already read in pieces from a large file. */
  importDocument?(doc: JsonDocument, fileName?: string): ImportResult;
}
