import { loopRunner } from '../loops/framework-loops.js';
import {
  LOOP_KINDS,
  LOOP_STEPS,
  OVERSIZED_AT,
  OVERSIZED_BASE,
  cellLabel,
  contractBreaches,
  matrixCells,
  runLoopCell,
  type LoopCell,
  type LoopOutcome,
} from '../loops/loop-matrix.js';
import { freeAuditEncoder } from '../loops/prompt-audit.js';
import type { BenchSection, BenchSuite } from './types.js';

/** `--quick`: the smallest and a middle window, one ordinary and the larger-than-window loop. */
function quickCells(kind: LoopCell['kind']): LoopCell[] {
  return [8_000, 32_000].flatMap((window) => [
    { kind, window, resultTokens: 4_000 },
    { kind, window, resultTokens: OVERSIZED_BASE, oversizedAt: OVERSIZED_AT },
  ]);
}

const int = (n: number) => n.toLocaleString('en-US');

function row(o: LoopOutcome): Array<string | number> {
  return [
    cellLabel(o.cell),
    o.finished ? 'yes' : `threw at call ${o.modelCalls + 1}`,
    `${int(o.largestPrompt)} / ${int(o.budget)} (${Math.round((100 * o.largestPrompt) / o.budget)}%)`,
    `${o.overBudget} of ${o.modelCalls}`,
    o.summariesPer10 === null
      ? `${o.summaries} in ${Math.max(0, o.modelCalls - 1)} steps`
      : o.summariesPer10.toFixed(1),
    o.badPairing + o.taskMissing === 0 ? 'ok' : `${o.badPairing} unpaired, ${o.taskMissing} without task`,
  ];
}

/**
 * The agent-loop matrix: every framework and mode, windows 8k–128k, read_file results of
 * 0.5k–8k tokens and one larger than the window, 30 steps each, every prompt counted with
 * tiktoken o200k. One table per framework and mode.
 */
export const loopsSuite: BenchSuite = {
  name: 'loops',
  async run(ctx) {
    const sections: BenchSection[] = [];
    const overview: Array<Array<string | number>> = [];
    const breaches: string[] = [];
    for (const kind of LOOP_KINDS) {
      const outcomes: LoopOutcome[] = [];
      for (const cell of ctx.quick ? quickCells(kind) : matrixCells(kind)) {
        const o = await runLoopCell(cell, loopRunner(kind));
        outcomes.push(o);
        breaches.push(...contractBreaches(o));
        ctx.log(
          `loops: ${kind.framework} ${kind.mode} ${cellLabel(cell)}: ${o.finished ? 'finished' : o.error}`,
        );
      }
      const held = outcomes.filter((o) => contractBreaches(o).length === 0).length;
      const worst = outcomes.reduce((a, o) =>
        o.largestPrompt / o.budget > a.largestPrompt / a.budget ? o : a,
      );
      overview.push([
        `${kind.framework} ${kind.mode}`,
        `${held} of ${outcomes.length}`,
        outcomes.filter((o) => !o.finished).length,
        outcomes.filter((o) => o.overBudget > 0).length,
        `${Math.round((100 * worst.largestPrompt) / worst.budget)}% (${cellLabel(worst.cell)})`,
        Math.max(
          0,
          ...outcomes.flatMap((o) => (o.summariesPer10 === null ? [] : [o.summariesPer10])),
        ).toFixed(1),
      ]);
      const errors = [...new Set(outcomes.flatMap((o) => (o.error ? [o.error] : [])))];
      sections.push({
        title: `Agent loops: ${kind.framework} ${kind.mode}`,
        headers: [
          'window × result tokens',
          'finished',
          'largest prompt / window',
          'calls over window',
          'summaries per 10 steps',
          'pairing, task',
        ],
        rows: outcomes.map(row),
        notes: [
          `${held} of ${outcomes.length} loops held (finished, every prompt within the window, paired, task present).`,
          `${LOOP_STEPS} read_file steps of source text from src/ each; "+ one N" loops return N tokens (one and a half windows) at read ${OVERSIZED_AT + 1} and ${OVERSIZED_BASE} otherwise; adapter configured only with limits: { capacity }; the window is capacity minus the default output reserve; prompts counted with tiktoken o200k over system prompt, messages, tool calls, results and tool schemas.`,
          ...errors.map((e) => `Thrown: ${e}`),
        ],
      });
    }
    sections.unshift({
      title: 'Agent loops: overview',
      headers: [
        'framework, mode',
        'loops that held',
        'loops that threw',
        'loops with prompts over the window',
        'largest prompt / window',
        'most summaries per 10 steps (loops of 10 steps or more)',
      ],
      rows: overview,
      notes: [
        'A loop holds when it finishes and every prompt its model received fits the window (capacity less the default output reserve), answers every tool call and states the task.',
      ],
    });
    ctx.log(`loops: ${breaches.length === 0 ? 'every loop held' : `${breaches.length} breaches`}`);
    freeAuditEncoder();
    return sections;
  },
};
