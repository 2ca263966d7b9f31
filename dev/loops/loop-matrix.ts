import { createCompactorSession } from '../../src/session/index.js';
import { auditPrompt, type SeenPrompt } from './prompt-audit.js';
import { sourceText } from './source-text.js';

/** The six ways a framework runs an agent loop. */
export const LOOP_KINDS = [
  { framework: 'ai-sdk', mode: 'generateText' },
  { framework: 'ai-sdk', mode: 'streamText' },
  { framework: 'langchain', mode: 'invoke' },
  { framework: 'langchain', mode: 'stream' },
  { framework: 'openai-agents', mode: 'run' },
  { framework: 'openai-agents', mode: 'run stream' },
] as const;
export type LoopKind = (typeof LOOP_KINDS)[number];

export const LOOP_STEPS = 30;
export const LOOP_WINDOWS = [8_000, 12_000, 16_000, 32_000, 128_000];
export const LOOP_RESULT_SIZES = [500, 2_000, 4_000, 8_000];
/** The loop with one result larger than the window: ordinary results of this size … */
export const OVERSIZED_BASE = 2_000;
/** … and at this read, one of one and a half windows. */
export const OVERSIZED_AT = 6;

/** One cell of the matrix. */
export interface LoopCell {
  kind: LoopKind;
  window: number;
  /** Tokens of each `read_file` result. */
  resultTokens: number;
  /** The read that returns one and a half windows instead (the larger-than-window loop). */
  oversizedAt?: number;
}

export const GOAL_LINE = 'Find every place where a request could leave the context window and list them.';
export const TASK = `${GOAL_LINE}\nRead the source files one by one with read_file, then answer in one paragraph.`;
export const SYSTEM = 'You are a careful code reviewer. Use the read_file tool to read files; do not guess.';
export const FINAL_ANSWER = 'Done: every file was read.';
export const READ_FILE = {
  name: 'read_file',
  description: 'Read a source file of the repository and return its text.',
  parameters: {
    type: 'object' as const,
    properties: { path: { type: 'string' as const, description: 'Path relative to the repository root' } },
    required: ['path'],
    additionalProperties: false,
  },
};

/**
 * What a framework runner is given: the model's script (a thought and a `read_file` call per
 * step, then the answer), the tool's output, and where to report every prompt the model receives.
 */
export interface LoopScript {
  capacity: number;
  steps: number;
  /** What the model says and the path it reads at step `n` (n < steps). */
  step(n: number): { thought: string; path: string };
  /** The tool's output for its `n`-th execution. */
  read(n: number): string;
  seen(prompt: SeenPrompt): void;
}

/** Runs one loop to its end; resolves with the final answer or rejects with the framework's error. */
export type LoopRunner = (script: LoopScript) => Promise<string>;

/** What one loop did, measured on every prompt its model received. */
export interface LoopOutcome {
  cell: LoopCell;
  /** Tokens every request may use: capacity − the default output reserve. */
  budget: number;
  finished: boolean;
  /** First line of the error the loop threw, if it did. */
  error?: string;
  modelCalls: number;
  largestPrompt: number;
  overBudget: number;
  badPairing: number;
  taskMissing: number;
  /** Distinct summaries the model was shown (one per compaction that reached it). */
  summaries: number;
  /** Summaries per 10 tool steps; null when the loop stopped before 10 steps (too few to say). */
  summariesPer10: number | null;
}

/** The output reserve a new user gets by default with only `limits: { capacity }`. */
export function defaultReserve(capacity: number): number {
  const session = createCompactorSession({ limits: { capacity } });
  const reserve = session.limits.reservedOutput ?? 0;
  session.close();
  return reserve;
}

/** Runs one cell of the matrix with the given framework runner and measures every prompt. */
export async function runLoopCell(cell: LoopCell, runner: LoopRunner): Promise<LoopOutcome> {
  const source = sourceText();
  const budget = cell.window - defaultReserve(cell.window);
  const audits: ReturnType<typeof auditPrompt>[] = [];
  const script: LoopScript = {
    capacity: cell.window,
    steps: LOOP_STEPS,
    step: (n) => {
      const path = source.paths[(n * 5) % source.paths.length];
      return { thought: `Step ${n + 1}: reading ${path} next.`, path };
    },
    read: (n) => source.read(n, n === cell.oversizedAt ? Math.ceil(cell.window * 1.5) : cell.resultTokens),
    seen: (prompt) => audits.push(auditPrompt(prompt, GOAL_LINE)),
  };
  let finished = false;
  let error: string | undefined;
  try {
    finished = (await runner(script)).includes(FINAL_ANSWER);
    if (!finished) error = 'the loop ended without the final answer';
  } catch (e) {
    error = `${(e as Error).name}: ${String((e as Error).message).split('\n')[0]}`;
  }
  const summaries = new Set(audits.flatMap((a) => a.summaries));
  const toolSteps = Math.min(LOOP_STEPS, audits.length - 1);
  return {
    cell,
    budget,
    finished,
    ...(error !== undefined ? { error } : {}),
    modelCalls: audits.length,
    largestPrompt: Math.max(0, ...audits.map((a) => a.tokens)),
    overBudget: audits.filter((a) => a.tokens > budget).length,
    badPairing: audits.filter((a) => !a.pairingValid).length,
    taskMissing: audits.filter((a) => !a.taskPresent).length,
    summaries: summaries.size,
    summariesPer10: toolSteps >= 10 ? (summaries.size * 10) / toolSteps : null,
  };
}

/** Every cell of the full matrix for one kind: windows × result sizes, plus the larger-than-window loop per window. */
export function matrixCells(kind: LoopKind): LoopCell[] {
  return LOOP_WINDOWS.flatMap((window) => [
    ...LOOP_RESULT_SIZES.map((resultTokens) => ({ kind, window, resultTokens })),
    { kind, window, resultTokens: OVERSIZED_BASE, oversizedAt: OVERSIZED_AT },
  ]);
}

/** The cell's row label: window and result size (and the oversized read). */
export function cellLabel(cell: LoopCell): string {
  const k = (n: number) => (n >= 1_000 ? `${n / 1_000}k` : String(n));
  return cell.oversizedAt !== undefined
    ? `${k(cell.window)} × ${k(cell.resultTokens)} + one ${k(Math.ceil(cell.window * 1.5))}`
    : `${k(cell.window)} × ${k(cell.resultTokens)}`;
}

/** One line per loop that broke the contract, saying what broke (empty when every loop held). */
export function contractBreaches(outcome: LoopOutcome): string[] {
  const o = outcome;
  const where = `${o.cell.kind.framework} ${o.cell.kind.mode} ${cellLabel(o.cell)}`;
  const out: string[] = [];
  if (!o.finished) out.push(`${where}: did not finish (${o.error ?? 'no answer'})`);
  if (o.overBudget > 0)
    out.push(
      `${where}: ${o.overBudget} of ${o.modelCalls} prompts over ${o.budget} tokens (largest ${o.largestPrompt})`,
    );
  if (o.badPairing > 0) out.push(`${where}: ${o.badPairing} prompts with unpaired tool calls or results`);
  if (o.taskMissing > 0) out.push(`${where}: ${o.taskMissing} prompts without the task`);
  return out;
}
