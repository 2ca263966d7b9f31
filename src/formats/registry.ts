import { UserError } from '../core/errors.js';
import { aiderFormat } from './aider.js';
import { anthropicFormat } from './anthropic.js';
import { canonicalFormat } from './canonical.js';
import { claudeCodeFormat } from './claude-code.js';
import { codexFormat } from './codex.js';
import { detectIn, documentFormatIn } from './detect.js';
import { geminiCliFormat } from './gemini-cli.js';
import { miniSweAgentFormat } from './mini-swe-agent.js';
import { openaiChatFormat } from './openai-chat.js';
import { openaiResponsesFormat } from './openai-responses.js';
import { openHandsFormat } from './openhands.js';
import { sweAgentFormat } from './swe-agent.js';
import type { SessionFormat } from './types.js';

/**
 * Every input format, in the order `--help` lists them. Each importer brings its own
 * detection rules; adding a format is its file and one line here.
 */
export const FORMATS = [
  canonicalFormat,
  openaiChatFormat,
  openaiResponsesFormat,
  anthropicFormat,
  sweAgentFormat,
  miniSweAgentFormat,
  openHandsFormat,
  claudeCodeFormat,
  aiderFormat,
  codexFormat,
  geminiCliFormat,
] as const;

/** Every input format the importers understand. */
export type FormatName = (typeof FORMATS)[number]['name'];

/** All format names, in the order `--help` lists them. */
export const FORMAT_NAMES: readonly FormatName[] = FORMATS.map((f) => f.name);

/** The format of a name. */
export function formatNamed(name: FormatName): SessionFormat<FormatName> {
  return FORMATS.find((f) => f.name === name) as SessionFormat<FormatName>;
}

/** Checks a `--from` value. */
export function parseFormatName(value: string): FormatName {
  if ((FORMAT_NAMES as readonly string[]).includes(value)) return value as FormatName;
  throw new UserError(`unknown format '${value}' (expected one of: ${FORMAT_NAMES.join(', ')})`);
}

/**
 * Detects an input's format from its content (and file name as a hint). Throws a
 * one-line UserError when nothing matches.
 */
export function detectFormat(text: string, fileName?: string): FormatName {
  return detectIn(FORMATS, text, fileName) as FormatName;
}

/** The format of a parsed JSON document, when its shape is a known one. */
export function fromJsonDocument(doc: unknown): FormatName | undefined {
  return documentFormatIn(FORMATS, doc) as FormatName | undefined;
}
