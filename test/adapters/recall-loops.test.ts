import { afterAll, describe, expect, it } from '@jest/globals';
import { recallLoop, type RecallFramework } from '#dev/loops/recall-loops.js';
import { LOST, RECALL_FINAL, markerOf } from '#dev/fakes/recall-model.js';
import { freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { freeEncoders } from '#src/estimate/index.js';

afterAll(() => {
  freeAuditEncoder();
  freeEncoders();
});

const FRAMEWORKS: RecallFramework[] = ['ai-sdk', 'langchain', 'openai-agents'];
// Eight files of a sixth of the window each: the first is cleared before the question comes.
const WINDOWS = [8_000, 32_000];

describe('loops that need the past: the model recalls a cleared file through the adapter', () => {
  for (const framework of FRAMEWORKS)
    for (const window of WINDOWS)
      it(`C6: ${framework}, window ${window / 1000}k: the right marker, one recall, the same tool list in every call`, async () => {
        const outcome = await recallLoop(framework)({ window, files: 8, fileTokens: Math.floor(window / 6) });
        expect(outcome.final).not.toBe(LOST);
        expect(outcome.final).toBe(RECALL_FINAL(markerOf(0)));
        expect(outcome.recalls).toBe(1);
        expect(outcome.modelCalls).toBe(8 + 2);
        expect(new Set(outcome.toolLists).size).toBe(1);
        expect(outcome.toolLists[0]).toContain('recall');
      });
});
