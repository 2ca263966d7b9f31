import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentScript, AgentTurn } from '../fakes/agent-upstream.js';
import { wirePrompt } from '../fakes/wire-prompt.js';
import { auditPrompt } from '../loops/prompt-audit.js';
import { sourceText } from '../loops/source-text.js';

/*
 * The tool loop every client of the proxy is driven through: a task, then one `read_file` of
 * a ~4k-token slice of this repository's source per step, then an answer. The files are real
 * files on disk so a client nobody here wrote (a Python script, an agent CLI) reads them itself.
 */

export const LOOP_GOAL = 'Find every place where a request could leave the context window and list them.';
export const LOOP_TASK = `${LOOP_GOAL}\nRead the files one by one with read_file, then answer in one paragraph.`;
export const LOOP_SYSTEM =
  'You are a careful code reviewer. Use the read_file tool to read files; do not guess.';
export const LOOP_ANSWER = 'Done: every file was read.';

/** Writes `steps` files of `tokens` tokens each (`file-<n>.txt`) into `dir`. */
export function writeLoopFiles(dir: string, steps: number, tokens: number): void {
  mkdirSync(dir, { recursive: true });
  const source = sourceText();
  for (let n = 0; n < steps; n++) writeFileSync(join(dir, `file-${n}.txt`), source.read(n, tokens));
}

/** The fake model's script: read `file-<n>.txt` at step n (`tool` renames the call for a client whose tool differs). */
export function loopScript(
  steps: number,
  tool: { name: string; args(n: number): Record<string, unknown> } = {
    name: 'read_file',
    args: (n) => ({ path: `file-${n}.txt` }),
  },
): AgentScript {
  return { steps, toolName: tool.name, args: tool.args, finalAnswer: LOOP_ANSWER, goal: LOOP_GOAL };
}

/** What the provider received over a loop, audited with tiktoken o200k (not Compactor's estimator). */
export interface UpstreamAudit {
  requests: number;
  summaries: number;
  /** Largest agent request, in tokens (input plus the output it asked for). */
  largest: number;
  overWindow: number;
  badPairing: number;
  taskMissing: number;
  /** Steps answered, in order (a summary request is not a step). */
  steps: (number | 'final')[];
}

/** Audits every agent request a fake upstream answered against `window`. */
export function auditTurns(turns: readonly AgentTurn[], window: number): UpstreamAudit {
  const audit: UpstreamAudit = {
    requests: 0,
    summaries: 0,
    largest: 0,
    overWindow: 0,
    badPairing: 0,
    taskMissing: 0,
    steps: [],
  };
  for (const t of turns) {
    if (t.answered === 'summary') {
      audit.summaries++;
      continue;
    }
    audit.requests++;
    audit.steps.push(t.answered);
    const a = auditPrompt(wirePrompt(t.protocol, t.request.body), LOOP_GOAL);
    const body = t.request.body ?? {};
    const asked = body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens ?? 0;
    const tokens = a.tokens + (typeof asked === 'number' ? asked : 0);
    audit.largest = Math.max(audit.largest, tokens);
    if (tokens > window) audit.overWindow++;
    if (!a.pairingValid) audit.badPairing++;
    if (!a.taskPresent) audit.taskMissing++;
  }
  return audit;
}
