import { readFileSync } from 'node:fs';

/**
 * The versioned local summary prompt (L8), kept as a Markdown file next to this module so
 * it can be reviewed and diffed as text. The headings between `<template>` tags are the
 * section contract shared by provider prompts, the offline summarizer and validation.
 */

/** The prompt version used when none is named. */
export const DEFAULT_SUMMARY_PROMPT_VERSION = 'summary-v1';

/** A loaded summary prompt. */
export interface SummaryPrompt {
  version: string;
  /** The instructions sent with the fork (the file without its leading comment). */
  instructions: string;
  /** Section headings in order, without the leading `## `. */
  sections: string[];
}

const cache = new Map<string, SummaryPrompt>();

/** Headings listed between `<template>` and `</template>`, in order. */
export function parseTemplateSections(text: string): string[] {
  const open = text.indexOf('<template>');
  const close = text.indexOf('</template>');
  if (open < 0 || close < open) throw new Error('summary prompt has no <template> block');
  return text
    .slice(open + '<template>'.length, close)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('## '))
    .map((l) => l.slice(3).trim());
}

/**
 * Loads `prompts/<version>.md` (cached). The version must look like `summary-v<N>` so a
 * configured value can never name a path outside the prompt directory.
 */
export function loadSummaryPrompt(version: string = DEFAULT_SUMMARY_PROMPT_VERSION): SummaryPrompt {
  const hit = cache.get(version);
  if (hit) return hit;
  if (!/^summary-v\d+$/.test(version)) throw new Error(`unknown summary prompt version '${version}'`);
  const raw = readFileSync(new URL(`./prompts/${version}.md`, import.meta.url), 'utf8');
  const instructions = raw.replace(/^<!--[\s\S]*?-->\s*/, '').trim();
  const prompt: SummaryPrompt = { version, instructions, sections: parseTemplateSections(instructions) };
  cache.set(version, prompt);
  return prompt;
}

/** The default prompt's section headings. */
export function summarySections(): string[] {
  return loadSummaryPrompt().sections;
}
