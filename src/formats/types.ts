import type { Message } from '../messages/message.js';

/** Every input format the importers understand. */
export type FormatName =
  | 'canonical'
  | 'openai-chat'
  | 'openai-responses'
  | 'anthropic'
  | 'swe-agent'
  | 'mini-swe-agent'
  | 'openhands'
  | 'claude-code'
  | 'aider'
  | 'codex'
  | 'gemini-cli';

/** All format names, in the order `--help` lists them. */
export const FORMAT_NAMES: readonly FormatName[] = [
  'canonical',
  'openai-chat',
  'openai-responses',
  'anthropic',
  'swe-agent',
  'mini-swe-agent',
  'openhands',
  'claude-code',
  'aider',
  'codex',
  'gemini-cli',
];

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
