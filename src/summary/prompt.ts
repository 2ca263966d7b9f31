import { SUMMARY_PROMPT_V1 } from './prompts/summary-v1.js';
import { InternalError } from '../core/errors.js';

/**
 * The versioned local summary prompt, kept as a string module under prompts/ so the
 * package works when bundled. The headings between `<template>` tags are the
 * section contract shared by provider prompts, the offline summarizer and validation.
 */

/** The prompt version used when none is named. */
export const DEFAULT_SUMMARY_PROMPT_VERSION = 'summary-v1';

/** A loaded summary prompt. */
export interface SummaryPrompt {
  version: string;
  /** The instructions sent with the fork. */
  instructions: string;
  /** Section headings in order, without the leading `## `. */
  sections: string[];
}

const cache = new Map<string, SummaryPrompt>();

/** Headings listed between `<template>` and `</template>`, in order. */
export function parseTemplateSections(text: string): string[] {
  const open = text.indexOf('<template>');
  const close = text.indexOf('</template>');
  if (open < 0 || close < open) throw new InternalError('summary prompt has no <template> block');
  return text
    .slice(open + '<template>'.length, close)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('## '))
    .map((l) => l.slice(3).trim());
}

/** Prompt texts by version; a new version is a new module here. */
const PROMPT_TEXTS: Readonly<Record<string, string>> = { 'summary-v1': SUMMARY_PROMPT_V1 };

/** Returns the prompt of a version (cached); an unknown version is an error. */
export function loadSummaryPrompt(version: string = DEFAULT_SUMMARY_PROMPT_VERSION): SummaryPrompt {
  const hit = cache.get(version);
  if (hit) return hit;
  const raw = Object.hasOwn(PROMPT_TEXTS, version) ? PROMPT_TEXTS[version] : undefined;
  if (raw === undefined) throw new InternalError(`unknown summary prompt version '${version}'`);
  const instructions = raw.trim();
  const prompt: SummaryPrompt = { version, instructions, sections: parseTemplateSections(instructions) };
  cache.set(version, prompt);
  return prompt;
}

/** The default prompt's section headings. */
export function summarySections(): string[] {
  return loadSummaryPrompt().sections;
}
