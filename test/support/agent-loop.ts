import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { get_encoding, type Tiktoken } from 'tiktoken';
import { textOf, type Message } from '../../src/messages/message.js';

/*
 * An agent loop as a user meets it: a task, then steps of one `read_file` call and its result of
 * a given size, and an independent count of what the model receives — tiktoken o200k over every
 * text sent (system prompt, tool schemas, messages, call arguments) plus a fixed allowance per
 * message (4) and per call (20), the overheads chat APIs add. Compactor's own estimator is not
 * used, so a request it underestimates fails here.
 */

export const TASK =
  'TASK: the parser drops trailing comments in nested blocks; find the cause in src/ and fix it.';
export const SYSTEM = 'You are a coding agent. Read files with read_file, then explain and fix the bug.';
export const TOOLS = [
  {
    name: 'read_file',
    description: 'Read a source file of the repository and return its text.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Path relative to the repository root.' } },
      required: ['path'],
    },
  },
];

let encoder: Tiktoken | undefined;
const counts = new Map<string, number>();
/** Tokens of `text` in o200k (memoized: requests repeat their messages). */
export function tokensOf(text: string): number {
  let n = counts.get(text);
  if (n === undefined) {
    encoder ??= get_encoding('o200k_base');
    n = encoder.encode_ordinary(text).length;
    counts.set(text, n);
  }
  return n;
}
export function freeLoopEncoder(): void {
  encoder?.free();
  encoder = undefined;
  counts.clear();
}

/** Tokens the model receives for `messages` with the system prompt and tool schemas. */
export function promptTokens(messages: readonly Message[], system = SYSTEM, tools: unknown = TOOLS): number {
  let n = tokensOf(system) + tokensOf(JSON.stringify(tools));
  for (const m of messages) {
    n += 4 + tokensOf(textOf(m.content));
    for (const c of m.toolCalls ?? []) n += 20 + tokensOf(c.name) + tokensOf(c.arguments);
  }
  return n;
}

/** Every result answers an earlier call of the same request, and every call is answered once. */
export function pairingProblems(messages: readonly Message[]): string[] {
  const open = new Map<string, number>();
  const problems: string[] = [];
  messages.forEach((m, i) => {
    for (const c of m.toolCalls ?? []) open.set(c.id, i);
    if (m.role === 'tool') {
      if (!open.has(m.toolCallId ?? ''))
        problems.push(`message ${i}: result for unknown call ${m.toolCallId}`);
      open.delete(m.toolCallId ?? '');
    }
  });
  for (const [id, i] of open) problems.push(`message ${i}: call ${id} has no result`);
  return problems;
}

/** The task is there: verbatim, or restated by a summary. */
export function hasTask(messages: readonly Message[]): boolean {
  return messages.some(
    (m) => m.role !== 'tool' && textOf(m.content).includes('parser drops trailing comments'),
  );
}

let source: string | undefined;
/** Source-like text of about `tokens` tokens, different for each step (the repository's own code). */
export function sourceText(tokens: number, step: number): string {
  source ??= readdirSync(join(import.meta.dirname, '../../src/projection'))
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => readFileSync(join(import.meta.dirname, '../../src/projection', f), 'utf8'))
    .join('\n');
  encoder ??= get_encoding('o200k_base');
  const all = encoder.encode_ordinary(source);
  const start = (step * 997) % Math.max(1, all.length - tokens);
  const ids = [];
  for (let i = 0; i < tokens; i++) ids.push(all[(start + i) % all.length]);
  return `// step ${step}\n` + new TextDecoder().decode(encoder.decode(Uint32Array.from(ids)));
}

/** One step's messages: a `read_file` call and its result of about `tokens` tokens. */
export function readStep(step: number, tokens: number): Message[] {
  const id = `call_${step}`;
  return [
    {
      role: 'assistant',
      content: `Reading the next file (step ${step}).`,
      toolCalls: [{ id, name: 'read_file', arguments: JSON.stringify({ path: `src/file-${step}.ts` }) }],
    },
    { role: 'tool', toolCallId: id, toolName: 'read_file', content: sourceText(tokens, step) },
  ];
}

/** What a loop of a matrix cell did. */
export interface LoopRow {
  window: number;
  resultTokens: number;
  steps: number;
  finished: boolean;
  error: string | null;
  largestPrompt: number;
  overWindow: number;
  pairingProblems: number;
  missingTask: number;
  summaryCalls: number;
}

/** Plain-text table of loop rows. */
export function loopTable(rows: readonly LoopRow[]): string {
  const head =
    'window  result  finished  largest prompt / window  over  pairing  no task  summary calls / 10 steps';
  return [
    head,
    ...rows.map(
      (r) =>
        `${String(r.window).padStart(6)}  ${String(r.resultTokens).padStart(6)}  ${(r.finished ? 'yes' : 'NO').padEnd(8)}  ` +
        `${`${r.largestPrompt} / ${r.window}`.padEnd(23)}  ${String(r.overWindow).padStart(4)}  ${String(r.pairingProblems).padStart(7)}  ` +
        `${String(r.missingTask).padStart(7)}  ${((r.summaryCalls * 10) / r.steps).toFixed(1)}`,
    ),
  ].join('\n');
}
