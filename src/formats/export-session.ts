import { UserError } from '../core/errors.js';
import type { Message } from '../messages/message.js';
import { exportAnthropic } from './anthropic.js';
import { exportCanonical } from './canonical.js';
import { exportOpenAIChat } from './openai-chat.js';
import { exportOpenAIResponses } from './openai-responses.js';
import { EXPORT_FORMATS, type ExportFormat, type FormatName } from './types.js';

/** Options of {@link exportSession}. */
export interface ExportOptions {
  /**
   * The imported session's `meta`. When the session came from the same provider format,
   * its document layout and top-level keys (model, tools …) are restored.
   */
  meta?: Record<string, unknown>;
  /** Session id written into canonical documents. */
  id?: string;
}

/**
 * Serializes messages in a provider format or the canonical one. A provider import
 * exported to the same format gives back equivalent JSON, unknown fields included.
 */
export function exportSession(
  messages: readonly Message[],
  to: ExportFormat,
  opts: ExportOptions = {},
): string {
  switch (to) {
    case 'canonical':
      return exportCanonical(messages, { id: opts.id });
    case 'openai-chat':
      return exportOpenAIChat(messages, opts.meta);
    case 'openai-responses':
      return exportOpenAIResponses(messages, opts.meta);
    case 'anthropic':
      return exportAnthropic(messages, opts.meta);
  }
}

/** Provider formats export to themselves; transcript formats to canonical. */
export function defaultExportFormat(input: FormatName): ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(input) ? (input as ExportFormat) : 'canonical';
}

/** Checks a `--to` value (`responses` is accepted for `openai-responses`). */
export function parseExportFormat(value: string): ExportFormat {
  const v = value === 'responses' ? 'openai-responses' : value === 'chat' ? 'openai-chat' : value;
  if ((EXPORT_FORMATS as readonly string[]).includes(v)) return v as ExportFormat;
  throw new UserError(
    `unknown export format '${value}' (expected openai-chat, anthropic, responses or canonical)`,
  );
}
