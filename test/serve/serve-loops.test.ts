import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { GOAL_LINE, TASK } from '#dev/loops/loop-matrix.js';
import { auditPrompt, freeAuditEncoder } from '#dev/loops/prompt-audit.js';
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
import { COMPACTING_POLICY, startProxyTo } from '#support/serve/proxy.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

afterAll(() => {
  freeAuditEncoder();
  freeEncoders();
});

const WINDOW = 16_000;
const STEPS = 30;
const RESULT_TOKENS = 4_000;
const MAX_TOKENS = 1_024;
const KEY = 'sk-test-serve-loop-credential';
const MODELS: Record<ServeProtocol, string> = {
  anthropic: 'claude-sonnet-4-6',
  'openai-chat': 'gpt-4o',
  'openai-responses': 'gpt-4o',
};

const loopOf = (r: RecordedRequest) => r.headers['x-test-loop'];

/**
 * Where consecutive requests of a loop stop sharing their prefix: the indices of requests
 * whose conversation list does not start with the previous one's, byte for byte up to the end
 * of its last message.
 */
function prefixBreaks(protocol: ServeProtocol, requests: RecordedRequest[]): number[] {
  const breaks: number[] = [];
  for (let i = 1; i < requests.length; i++) {
    const before = conversationOf(protocol, requests[i - 1].body).map((m) => JSON.stringify(m));
    const after = conversationOf(protocol, requests[i].body).map((m) => JSON.stringify(m));
    // Byte for byte: the two bodies agree up to the point where the previous one closes its list.
    const a = requests[i - 1].raw;
    const b = requests[i].raw;
    let common = 0;
    while (common < a.length && a[common] === b[common]) common++;
    const shared = before.every((m, k) => after[k] === m) && /^\s*\]/.test(a.slice(common));
    if (!shared) breaks.push(i);
  }
  return breaks;
}

describe('compactor serve: 30-step tool loops of the official clients at a 16k window', () => {
  // Each case runs two loops in parallel on one proxy: one asks for JSON, the other streams.
  const cases = [
    ...(['anthropic', 'openai-chat', 'openai-responses'] as const).map((protocol) => ({
      protocol,
      compacting: false,
    })),
    // Compaction instead of clearing: the summaries come from the upstream model.
    { protocol: 'anthropic' as const, compacting: true },
  ];
  for (const { protocol, compacting } of cases)
    it(`H1/C1/N1: ${protocol} JSON beside streaming${compacting ? ', compacting' : ''}: two loops in parallel finish; every upstream request fits, is paired, keeps the task and belongs to its own session`, async () => {
      const upstream = await startFakeAgentUpstream({ window: WINDOW });
      const server = await startProxyTo(
        upstream,
        WINDOW,
        compacting ? { session: { policy: COMPACTING_POLICY } } : {},
      );
      try {
        const base = {
          protocol,
          proxy: server.url,
          steps: STEPS,
          resultTokens: RESULT_TOKENS,
          model: MODELS[protocol],
          maxTokens: MAX_TOKENS,
          apiKey: KEY,
        };
        const loops: ClientLoop[] = [
          { ...base, stream: false, loop: 'A', task: TASK, identify: 'client-field' },
          {
            ...base,
            stream: true,
            loop: 'B',
            task: `${TASK}\nStart with the providers.`,
            identify: 'history',
          },
        ];
        const results = await Promise.all(loops.map(runClientLoop));
        for (const [i, r] of results.entries()) {
          expect(r.finalText).toBe(FINAL_TEXT);
          expect(r.streamProblems).toEqual([]);
          expect(r.sessions.size).toBeLessThanOrEqual(1);
          if (i === 1 && r.sessions.size > 0)
            expect([...r.sessions][0]).not.toBe([...results[0].sessions][0]);
        }
        for (const l of loops) {
          const other = l.loop === 'A' ? 'B' : 'A';
          const isSummaryCall = (r: RecordedRequest) => r.raw.includes('You are writing a checkpoint');
          const requests = upstream.requests.filter((r) => loopOf(r) === l.loop && !isSummaryCall(r));
          expect(requests).toHaveLength(STEPS + 1);
          const audits = requests.map((r) => auditPrompt(seenPromptOf(protocol, r.body), GOAL_LINE));
          const largest = Math.max(...audits.map((a) => a.tokens));
          expect(largest + MAX_TOKENS).toBeLessThanOrEqual(WINDOW);
          expect(audits.filter((a) => !a.pairingValid)).toEqual([]);
          expect(audits.filter((a) => !a.taskPresent)).toEqual([]);
          expect(requests.filter((r) => r.raw.includes(`call_${other}_`))).toEqual([]);
          // The client's own credential reached the upstream with every request.
          const credential = (r: RecordedRequest) =>
            String(r.headers.authorization ?? r.headers['x-api-key']);
          expect(requests.filter((r) => !credential(r).endsWith(KEY))).toEqual([]);
          // The prefix changes only where the projection changes (a clearing step or a
          // compaction), and those are rare: at most every other request.
          const breaks = prefixBreaks(protocol, requests);
          const summaries = new Set(audits.flatMap((a) => a.summaries)).size;
          console.log(
            `${protocol} ${l.stream ? 'stream' : 'json'} loop ${l.loop}: largest prompt ${largest} tokens, ${breaks.length} prefix changes in ${STEPS} steps, ${summaries} summaries`,
          );
          // Stubs by their recall id field (the files the loop reads are this repository's source,
          // which may name the field too).
          const cleared = (r: RecordedRequest) =>
            r.raw.match(/recall_id\\*":\\*"r-[0-9a-f]{8}/g)?.length ?? 0;
          const projectionChanged = (i: number) =>
            cleared(requests[i]) > cleared(requests[i - 1]) ||
            audits[i].summaries.join() !== audits[i - 1].summaries.join();
          expect(breaks.filter((i) => !projectionChanged(i))).toEqual([]);
          expect(breaks.length).toBeLessThanOrEqual(STEPS / 2);
          if (compacting) expect(summaries).toBeGreaterThanOrEqual(1);
        }
      } finally {
        await server.close();
        await upstream.close();
      }
    });
});
