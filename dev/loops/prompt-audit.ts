import { createRequire } from 'node:module';
import type { Tiktoken } from 'tiktoken';
import { SUMMARY_HEADERS } from '../../src/summary/summary-message.js';
import { rememberCounts } from '../fakes/fake-token-count.js';

/**
 * One prompt as a model received it, in plain pieces: every text it was sent (system prompt,
 * messages, tool call names and arguments, tool results), the order of calls and results, and
 * the tool schemas. Each framework's prompt is turned into this by its loop runner.
 */
export interface SeenPrompt {
  system: string[];
  messages: SeenMessage[];
  /** The tool schemas as sent (JSON). */
  tools: string;
}

export interface SeenMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  texts: string[];
  calls: Array<{ id: string; name: string; arguments: string }>;
  /** Tool results: the call id this answers. */
  answers?: string;
}

/** What one prompt looked like, counted with tiktoken o200k (not the library's own estimator). */
export interface PromptAudit {
  tokens: number;
  /** Every result answers an earlier call of the same prompt, once, and every call is answered. */
  pairingValid: boolean;
  /** The task's goal line is in the prompt (the first user message, or a summary restating it). */
  taskPresent: boolean;
  /** Summary texts in the prompt (to count compactions across a loop). */
  summaries: string[];
}

// Chat formats add a few tokens per message for the role and separators.
const PER_MESSAGE_TOKENS = 3;
const require = createRequire(import.meta.url);
let encoder: Tiktoken | undefined;

function o200k(): Tiktoken {
  if (!encoder) {
    const { get_encoding } = require('tiktoken') as typeof import('tiktoken');
    encoder = get_encoding('o200k_base');
  }
  return encoder;
}

/** Tokens of a text in o200k; special-token text counts as plain text. */
const remembered = rememberCounts((text) => (text === '' ? 0 : o200k().encode_ordinary(text).length));
const countTokens = remembered.count;

/** The tokens of a text, to cut deterministic slices from. */
export function encodeTokens(text: string): Uint32Array {
  return o200k().encode_ordinary(text);
}

/** The text of a run of tokens. */
export function decodeTokens(tokens: Uint32Array): string {
  return new TextDecoder().decode(o200k().decode(tokens));
}

/** Frees the tokenizer's WASM memory. */
export function freeAuditEncoder(): void {
  encoder?.free();
  encoder = undefined;
  remembered.forget();
}

/** Counts a prompt and checks its pairing, its task and its summaries. */
export function auditPrompt(prompt: SeenPrompt, goalLine: string): PromptAudit {
  let tokens = countTokens(prompt.tools);
  let taskPresent = false;
  const summaries: string[] = [];
  for (const text of prompt.system) {
    tokens += countTokens(text) + PER_MESSAGE_TOKENS;
    if (text.includes(goalLine)) taskPresent = true;
  }
  const calls = new Set<string>();
  const answered = new Set<string>();
  let pairingValid = true;
  for (const m of prompt.messages) {
    tokens += PER_MESSAGE_TOKENS;
    for (const text of m.texts) {
      tokens += countTokens(text);
      if (m.role !== 'tool' && text.includes(goalLine)) taskPresent = true;
      if (m.role !== 'tool' && SUMMARY_HEADERS.some((h) => text.trimStart().startsWith(h.trim())))
        summaries.push(text);
    }
    for (const c of m.calls) {
      tokens += countTokens(c.name) + countTokens(c.arguments);
      calls.add(c.id);
    }
    if (m.answers !== undefined) {
      if (!calls.has(m.answers) || answered.has(m.answers)) pairingValid = false;
      answered.add(m.answers);
    }
  }
  for (const id of calls) if (!answered.has(id)) pairingValid = false;
  return { tokens, pairingValid, taskPresent, summaries };
}

/** The texts inside a framework content value: strings, `text`/`value` fields, else its JSON. */
export function textsOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(textsOf);
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.text === 'string') return [o.text];
    if ('value' in o) return textsOf(o.value);
    if ('output' in o) return textsOf(o.output);
    if ('content' in o) return textsOf(o.content);
  }
  return [JSON.stringify(value)];
}
