import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { GOAL_LINE, SYSTEM, TASK } from '#dev/loops/loop-matrix.js';
import { auditPrompt, encodeTokens, freeAuditEncoder, type PromptAudit } from '#dev/loops/prompt-audit.js';
import { recallWireTool } from '#src/serve/recall-tool.js';
import { startServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { FINAL_TEXT, startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { RecordedRequest } from '#support/fake-http.js';
import {
  conversationOf,
  runClientLoop,
  seenPromptOf,
  type ClientLoop,
  type ServeProtocol,
} from '#support/serve-client-loops.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

afterAll(() => {
  freeAuditEncoder();
  freeEncoders();
});

const MAX_TOKENS = 1_024;
const KEY = 'sk-test-serve-clearing-credential';
const MODELS: Record<ServeProtocol, string> = {
  anthropic: 'claude-sonnet-4-6',
  'openai-chat': 'gpt-4o',
  'openai-responses': 'gpt-4o',
};
// Files of 2k–8k tokens in an order that is not sorted, so steps differ in size.
const SIZES = [
  3_000, 6_000, 2_000, 8_000, 4_000, 5_000, 2_500, 7_000, 3_500, 6_500, 2_000, 5_500, 4_500, 3_000,
];

const isSummaryCall = (r: RecordedRequest) => r.raw.includes('You are writing a checkpoint');

/** The index of the first message of `after` that differs from `before`'s (its length when none). */
function sameUpTo(before: unknown[], after: unknown[]): number {
  let k = 0;
  while (k < before.length && k < after.length && JSON.stringify(before[k]) === JSON.stringify(after[k])) k++;
  return k;
}

/** The request extends the previous one byte for byte: same bytes up to where the previous list closes. */
function keepsPrefix(protocol: ServeProtocol, a: RecordedRequest, b: RecordedRequest): boolean {
  const before = conversationOf(protocol, a.body);
  const after = conversationOf(protocol, b.body);
  let common = 0;
  while (common < a.raw.length && a.raw[common] === b.raw[common]) common++;
  return sameUpTo(before, after) === before.length && /^\s*\]/.test(a.raw.slice(common));
}

interface Run {
  requests: RecordedRequest[];
  audits: PromptAudit[];
  summaries: PromptAudit[];
  /** Prompt tokens of every upstream request, summary calls included (tiktoken o200k). */
  upstreamTokens: number;
  /** The first upstream request was a summary call (nothing to summarize yet). */
  summaryFirst: boolean;
}

/** An agent's system prompt of about `tokens` tokens (real coding agents send 6k–16k). */
function systemPrompt(tokens: number): string {
  const line =
    'You are a careful coding agent. Read files with read_file before you answer, one at a time.\n';
  return `${SYSTEM}\n${line.repeat(Math.max(0, Math.round(tokens / 20)))}`;
}

async function runLoop(
  protocol: ServeProtocol,
  stream: boolean,
  window: number | null,
  files: number,
  systemTokens: number,
): Promise<Run> {
  // The direct run gets a model with room for the whole loop: what the client would send without a proxy.
  const upstream = await startFakeAgentUpstream({ window: window ?? 1_000_000 });
  const server =
    window === null
      ? null
      : await startServer({
          port: 0,
          capacity: window,
          anthropicUpstream: upstream.url,
          openaiUpstream: upstream.url,
          http: { retries: 0 },
        });
  try {
    // Both clients add `/v1` themselves.
    const direct = upstream.url.replace(/\/v1$/, '');
    const loop: ClientLoop = {
      protocol,
      stream,
      proxy: server?.url ?? direct,
      steps: files,
      resultTokens: 0,
      resultTokensAt: (step) => SIZES[step % SIZES.length],
      model: MODELS[protocol],
      maxTokens: MAX_TOKENS,
      apiKey: KEY,
      loop: 'A',
      task: TASK,
      identify: 'client-field',
      system: systemPrompt(systemTokens),
    };
    const result = await runClientLoop(loop);
    expect(result.finalText).toBe(FINAL_TEXT);
    expect(result.streamProblems).toEqual([]);
    const all = upstream.requests.filter((r) => r.headers['x-test-loop'] === 'A');
    const audit = (r: RecordedRequest) => auditPrompt(seenPromptOf(protocol, r.body), GOAL_LINE);
    const requests = all.filter((r) => !isSummaryCall(r));
    const audits = requests.map(audit);
    const summaries = all.filter(isSummaryCall).map(audit);
    const upstreamTokens = [...audits, ...summaries].reduce((n, a) => n + a.tokens, 0);
    return { requests, audits, summaries, upstreamTokens, summaryFirst: isSummaryCall(all[0]) };
  } finally {
    await server?.close();
    await upstream.close();
  }
}

describe('compactor serve: clearing is rare and big, and the proxy never sends more than the client would', () => {
  // The system prompt takes a large share of a small window, as a coding agent's does.
  const systems: Record<number, number> = { 16_000: 6_000, 32_000: 12_000, 128_000: 12_000 };
  const cases = [16_000, 32_000, 128_000].flatMap((window, w) =>
    (['anthropic', 'openai-chat', 'openai-responses'] as const).map((protocol, p) => ({
      window,
      protocol,
      stream: (w + p) % 2 === 1,
      files: 8 + ((w * 3 + p) % 9),
      // A lean agent's one-line prompt, or a coding agent's large one.
      system: p === 0 ? 0 : systems[window],
    })),
  );
  for (const { window, protocol, stream, files, system } of cases)
    it(`C1/H2: ${protocol} ${stream ? 'streaming' : 'JSON'} at ${window}, ${files} files of 2k–8k, a ${system}-token system prompt: prefix kept between big clearing steps, upstream tokens ≤ direct, no summary on the first request`, async () => {
      const direct = await runLoop(protocol, stream, null, files, system);
      const proxied = await runLoop(protocol, stream, window, files, system);
      const { requests, audits } = proxied;
      expect(requests).toHaveLength(files + 1);
      expect(Math.max(...audits.map((a) => a.tokens)) + MAX_TOKENS).toBeLessThanOrEqual(window);
      expect(audits.filter((a) => !a.pairingValid)).toEqual([]);
      expect(audits.filter((a) => !a.taskPresent)).toEqual([]);
      // Each pair of consecutive requests either extends the previous byte for byte or is a
      // step: a compaction (a new summary) or a clearing step. A clearing step comes only when the
      // previous request plus the new messages would reach the compaction threshold (three
      // quarters of the window less the answer's room), and it clears every old result at once:
      // only the newest call's result stays whole.
      const threshold = Math.floor((window - MAX_TOKENS) * 0.75);
      const field = protocol === 'openai-responses' ? 'input' : 'messages';
      let kept = 0;
      const steps: string[] = [];
      const badSteps: string[] = [];
      for (let i = 1; i < requests.length; i++) {
        if (keepsPrefix(protocol, requests[i - 1], requests[i])) {
          kept++;
          continue;
        }
        if (audits[i].summaries.join() !== audits[i - 1].summaries.join()) continue;
        const before = conversationOf(protocol, requests[i - 1].body);
        const after = conversationOf(protocol, requests[i].body);
        const extended = { ...requests[i].body, [field]: [...before, ...after.slice(before.length)] };
        const carried = auditPrompt(seenPromptOf(protocol, extended), GOAL_LINE).tokens;
        const results = seenPromptOf(protocol, requests[i].body).messages.filter((m) => m.role === 'tool');
        const whole = results.filter((m) => !m.texts.join('').includes('recall_id')).length;
        steps.push(`request ${i}: ${carried} → ${audits[i].tokens}`);
        if (carried < threshold * 0.95 || whole > 1)
          badSteps.push(
            `request ${i}: would carry ${carried} (threshold ${threshold}), keeps ${whole} results whole`,
          );
      }
      const summaryCount = proxied.summaries.length;
      console.log(
        `${protocol} ${stream ? 'stream' : 'json'} ${window}, system ${system}: ${files} files, prefix kept ${kept}/${requests.length - 1}, clearing steps [${steps.join(', ')}], upstream ${proxied.upstreamTokens} vs direct ${direct.upstreamTokens}, ${summaryCount} summaries, largest ${Math.max(...audits.map((a) => a.tokens))}`,
      );
      expect(badSteps).toEqual([]);
      // No clearing step at all while the whole loop fits.
      if (direct.audits.every((a) => a.tokens < threshold * 0.95)) expect(steps).toEqual([]);
      // The recall tool the proxy offers is the one thing it adds: its definition, once a request.
      const recallTool = encodeTokens(JSON.stringify(recallWireTool(protocol))).length + 1;
      expect(proxied.upstreamTokens).toBeLessThanOrEqual(
        direct.upstreamTokens + requests.length * recallTool,
      );
      expect(proxied.summaryFirst).toBe(false);
      expect(summaryCount).toBeLessThanOrEqual(Math.ceil(files / 4));
    });
});
