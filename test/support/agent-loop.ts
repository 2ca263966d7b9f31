import { textOf, type Message } from '#src/messages/message.js';
import { auditPrompt, type PromptAudit, type SeenPrompt } from '#dev/loops/prompt-audit.js';
import { sourceText } from '#dev/loops/source-text.js';

/*
 * An agent loop as a user meets it through the session API: a task, then steps of one
 * `read_file` call and its result of a given size. What the model receives is audited by the
 * same tiktoken o200k count, pairing and task checks as the framework loop matrix (dev/loops/),
 * never by Compactor's own estimator.
 */

export const TASK =
  'TASK: the parser drops trailing comments in nested blocks; find the cause in src/ and fix it.';
/** The line that shows the task is present (verbatim, or restated by a summary). */
const GOAL_LINE = 'parser drops trailing comments';
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

/** Audits a request as the model receives it with {@link SYSTEM} and {@link TOOLS}. */
export function auditRequest(messages: readonly Message[]): PromptAudit {
  const prompt: SeenPrompt = {
    system: [SYSTEM],
    tools: JSON.stringify(TOOLS),
    messages: messages.map((m) => ({
      role: m.role,
      texts: [textOf(m.content)],
      calls: (m.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
      ...(m.role === 'tool' ? { answers: m.toolCallId ?? '' } : {}),
    })),
  };
  return auditPrompt(prompt, GOAL_LINE);
}

/** One step's messages: a `read_file` call and its result of `tokens` tokens of the repository's source. */
export function readStep(step: number, tokens: number): Message[] {
  const id = `call_${step}`;
  return [
    {
      role: 'assistant',
      content: `Reading the next file (step ${step}).`,
      toolCalls: [{ id, name: 'read_file', arguments: JSON.stringify({ path: `src/file-${step}.ts` }) }],
    },
    { role: 'tool', toolCallId: id, toolName: 'read_file', content: sourceText().read(step, tokens) },
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
