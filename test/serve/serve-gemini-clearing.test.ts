import { afterAll, describe, expect, it } from '@jest/globals';
import { TASK, GOAL_LINE } from '#dev/loops/loop-matrix.js';
import { startGeminiUpstream } from '#dev/fakes/gemini-upstream.js';
import { estimateBodyTokens } from '#dev/fakes/fake-window.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startServer } from '#src/serve/index.js';
import type { RecordedRequest } from '#support/fake-http.js';
import { argsOfStep, runGeminiLoop, stepOfArgs, type GeminiLoop } from '#support/gemini-cli-loop.js';

afterAll(() => freeEncoders());

const KEY = 'gemini-clearing-test-key-77a1';
const MODEL = 'gemini-2.5-flash';
const FINAL = 'Done: every file was read.';
// Files of 2k–8k tokens in an order that is not sorted, so steps differ in size.
const SIZES = [3_000, 6_000, 2_000, 8_000, 4_000, 5_000, 2_500, 7_000, 3_500, 6_500, 2_000, 5_500];

const isSummaryCall = (r: RecordedRequest) => r.body?.toolConfig?.functionCallingConfig?.mode === 'NONE';

/** Prompt tokens of a request as the fake model counts them (tiktoken o200k over every string). */
const tokensOf = (body: unknown) => estimateBodyTokens(body);

/**
 * Whether `b` sends `a` again byte for byte up to the end of `a`'s last content item: the same
 * bytes until `a`'s contents list closes, with only new items after them.
 */
function keepsPrefix(a: RecordedRequest, b: RecordedRequest): boolean {
  let common = 0;
  while (common < a.raw.length && a.raw[common] === b.raw[common]) common++;
  const closes = /^\s*\]/.test(a.raw.slice(common));
  return closes && b.body.contents.length >= a.body.contents.length;
}

async function run(window: number, keyOrder: GeminiLoop['keyOrder']) {
  const gemini = await startGeminiUpstream({
    window,
    stepOf: stepOfArgs,
    script: {
      steps: SIZES.length,
      toolName: 'read_file',
      args: argsOfStep,
      finalAnswer: FINAL,
      goal: GOAL_LINE,
    },
  });
  const server = await startServer({
    port: 0,
    capacity: window,
    geminiUpstream: gemini.baseUrl,
    http: { retries: 0 },
  });
  try {
    const result = await runGeminiLoop({
      base: server.url,
      model: MODEL,
      key: KEY,
      mode: 'sse',
      loop: 'A',
      task: TASK,
      system: 'You are a careful coding agent. Read files with read_file before you answer.',
      resultTokens: 0,
      resultTokensAt: (step) => SIZES[step],
      maxTurns: SIZES.length + 2,
      keyOrder,
    });
    expect(result.finalText).toBe(FINAL);
    return gemini.requests.filter((r) => !isSummaryCall(r));
  } finally {
    await server.close();
    await gemini.close();
  }
}

describe('compactor serve: Gemini clearing keeps the client bytes of what it did not change', () => {
  for (const keyOrder of ['parts-first', 'role-first'] as const)
    it(`C1: a Gemini CLI loop (items written ${keyOrder}) at 32k: the prefix is kept byte for byte between clearing steps, and each step clears every old result once the threshold is reached`, async () => {
      const window = 32_000;
      const requests = await run(window, keyOrder);
      expect(requests).toHaveLength(SIZES.length + 1);
      let kept = 0;
      const steps: number[] = [];
      const badSteps: string[] = [];
      // The compaction threshold: three quarters of the window less the answer's room (8,000 by default).
      const threshold = Math.floor((window - 8_000) * 0.75);
      for (let i = 1; i < requests.length; i++) {
        if (keepsPrefix(requests[i - 1], requests[i])) {
          kept++;
          continue;
        }
        // What the request would have carried had it extended the one before it.
        const before = requests[i - 1].body.contents as unknown[];
        const after = requests[i].body.contents as unknown[];
        // A step rewrites nothing before the first item it changed: up to there, both requests
        // are the client's own bytes (the loop writes its body with JSON.stringify).
        let same = 0;
        while (same < before.length && JSON.stringify(before[same]) === JSON.stringify(after[same])) same++;
        const raw = requests[i - 1].raw;
        const head =
          raw.slice(0, raw.indexOf('[') + 1) +
          before
            .slice(0, same)
            .map((c) => JSON.stringify(c))
            .join(',');
        expect(same).toBeGreaterThan(0);
        expect(raw.startsWith(head)).toBe(true);
        expect(requests[i].raw.startsWith(head)).toBe(true);
        const carried = tokensOf({
          ...requests[i].body,
          contents: [...before, ...after.slice(before.length)],
        });
        const results = after.flatMap((c: any) => c.parts.filter((p: any) => p.functionResponse));
        const whole = results.filter((p: any) => !JSON.stringify(p).includes('recall_id')).length;
        steps.push(carried - tokensOf(requests[i].body));
        if (carried < threshold || whole > 1)
          badSteps.push(`request ${i}: carried ${carried}, ${whole} whole`);
      }
      console.log(
        `gemini ${keyOrder} at ${window}: prefix kept ${kept}/${requests.length - 1}, clearing steps freed [${steps.join(', ')}] tokens, sizes [${requests.map((r) => tokensOf(r.body)).join(', ')}]`,
      );
      expect(steps.length).toBeGreaterThan(0);
      // A step comes only once a request reaches the threshold, and clears every old result but the newest.
      expect(badSteps).toEqual([]);
      expect(Math.min(...steps)).toBeGreaterThanOrEqual(threshold * 0.75);
      expect(kept).toBe(requests.length - 1 - steps.length);
    });
});
