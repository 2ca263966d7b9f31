import { afterAll, describe, expect, it } from '@jest/globals';
import { loopRunner } from '#dev/loops/framework-loops.js';
import {
  LOOP_KINDS,
  LOOP_STEPS,
  OVERSIZED_AT,
  OVERSIZED_BASE,
  cellLabel,
  contractBreaches,
  runLoopCell,
  type LoopCell,
} from '#dev/loops/loop-matrix.js';
import { freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { freeEncoders } from '#src/estimate/index.js';

afterAll(() => {
  freeAuditEncoder();
  freeEncoders();
});

/**
 * A slice of the agent-loop matrix (the whole of it runs in `npm run bench -- --only loops`):
 * each framework and mode, 30 read_file steps of source text, the adapter configured only with
 * `limits: { capacity }`. Every prompt the model receives is counted with tiktoken o200k.
 * Expected to fail until requests are fitted to the window where they leave the library.
 * Each mode runs two of the four cells below, alternating, so each framework runs all four
 * across its two modes and each cell runs both streaming and not; the bench runs every pair.
 */
const CELLS = [
  { window: 8_000, resultTokens: 2_000 },
  { window: 8_000, resultTokens: 4_000 },
  { window: 8_000, resultTokens: OVERSIZED_BASE, oversizedAt: OVERSIZED_AT },
  { window: 16_000, resultTokens: 8_000 },
];
const slice = (kind: LoopCell['kind'], index: number): LoopCell[] => {
  const half = (Math.floor(index / 2) + index) % 2;
  return [CELLS[half], CELLS[half + 2]].map((cell) => ({ kind, ...cell }));
};

describe('agent-loop matrix slice (fails until every request is fitted to its window): every prompt of every framework loop fits', () => {
  for (const [index, kind] of LOOP_KINDS.entries())
    for (const cell of slice(kind, index))
      it(`H1/C1/N1: ${kind.framework} ${kind.mode}, window ${cellLabel(cell)}: the loop finishes; every prompt fits, is paired and states the task`, async () => {
        const outcome = await runLoopCell(cell, loopRunner(kind));
        expect(contractBreaches(outcome)).toEqual([]);
        expect(outcome.modelCalls).toBe(LOOP_STEPS + 1);
      });
});
