import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { request } from 'undici';
import { GOAL_LINE } from '#dev/loops/loop-matrix.js';
import { auditPrompt, freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { startServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { seenPromptOf } from '#support/serve-client-loops.js';
import { codexHeaders, codexRequest, fileText, opencodeHeaders } from '#support/serve/agent-requests.js';
import { estimateBodyTokens } from '#dev/fakes/fake-window.js';

import { PROCESS_TEST_MS } from '#support/time-limits.js';

// Each case runs a 13-request agent loop through the proxy.
jest.setTimeout(PROCESS_TEST_MS);

afterAll(() => {
  freeAuditEncoder();
  freeEncoders();
});

const SUMMARY = 'You are writing a checkpoint of an agent session';

/** An opencode-shaped loop: a large fixed part, max_tokens 8192, one 4k-token file read per turn. */
async function agentLoop(window: number, systemLines: number, turns: number, maxTokens: number) {
  const upstream = await startFakeAgentUpstream({ window });
  const server = await startServer({
    port: 0,
    capacity: window,
    anthropicUpstream: upstream.url,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
  });
  const system = Array.from(
    { length: systemLines },
    (_, i) => `Rule ${i}: follow the project conventions.`,
  ).join('\n');
  const tools = Array.from({ length: 10 }, (_, i) => ({
    type: 'function',
    function: {
      name: `tool_${i}`,
      description: `Tool ${i} does things. `.repeat(40),
      parameters: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] },
    },
  }));
  const messages: any[] = [
    { role: 'system', content: system },
    { role: 'user', content: `${GOAL_LINE}\nRead the files one per turn.` },
  ];
  const direct: number[] = [];
  const statuses: number[] = [];
  try {
    for (let t = 0; t <= turns; t++) {
      const body = { model: 'fake-model', max_tokens: maxTokens, messages, tools, tool_choice: 'auto' };
      direct.push(auditPrompt(seenPromptOf('openai-chat', body), GOAL_LINE).tokens);
      const res = await request(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          ...opencodeHeaders('ses_gate'),
          'x-test-loop': 'g',
          'x-test-step': String(t),
          'x-test-steps': String(turns),
        },
        body: JSON.stringify(body),
      });
      statuses.push(res.statusCode);
      await res.body.text();
      messages.push(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: `call_${t}`,
              type: 'function',
              function: { name: 'tool_0', arguments: JSON.stringify({ filePath: `f${t}` }) },
            },
          ],
        },
        { role: 'tool', tool_call_id: `call_${t}`, content: fileText(`file-${t}`, 150) },
      );
    }
  } finally {
    await server.close();
    await upstream.close();
  }
  const sent = upstream.requests.map((r) => ({
    summary: r.raw.includes(SUMMARY),
    tokens: auditPrompt(seenPromptOf('openai-chat', r.body), GOAL_LINE).tokens,
  }));
  return { direct, sent, statuses, refusals: upstream.refusals };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('compactor serve is never worse than no proxy', () => {
  // opencode: ~9k tokens of system prompt and tools, max_tokens 8192; Qwen Code: ~16k, max_tokens 8000.
  const cases = [
    { agent: 'opencode', window: 16_000, systemLines: 700, maxTokens: 8_192 },
    { agent: 'opencode', window: 32_000, systemLines: 700, maxTokens: 8_192 },
    { agent: 'Qwen Code', window: 32_000, systemLines: 1_700, maxTokens: 8_000 },
  ];
  for (const { agent, window, systemLines, maxTokens } of cases)
    it(`H2: ${agent}-shaped at ${window}: no summary before there is history, few summaries, upstream tokens (summaries included) <= direct`, async () => {
      const turns = 12;
      const r = await agentLoop(window, systemLines, turns, maxTokens);
      const summaries = r.sent.filter((s) => s.summary).length;
      const sent = sum(r.sent.map((s) => s.tokens));
      console.log(
        `${agent} at ${window}: ${summaries} summaries, upstream ${sent} tokens, direct ${sum(r.direct)}`,
      );
      expect(r.statuses.filter((s) => s !== 200)).toEqual([]);
      expect(r.refusals).toEqual([]);
      expect(r.sent[0].summary).toBe(false);
      expect(summaries).toBeLessThanOrEqual(turns / 4);
      expect(sent).toBeLessThanOrEqual(sum(r.direct));
    });
});

/** A base64-like blob of about `chars` characters, as encrypted reasoning looks (deterministic). */
const blob = (seed: number, chars: number) => {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let x = seed + 1;
  let out = 'gAAAAA';
  for (let i = 0; i < chars; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += abc[x % 64];
  }
  return out;
};

describe('what the proxy does not model still counts', () => {
  it('D2: Codex encrypted reasoning is kept verbatim and counted: a request it alone pushes over the window is made to fit', async () => {
    const window = 16_000;
    const upstream = await startFakeAgentUpstream({ window });
    const server = await startServer({
      port: 0,
      capacity: window,
      openaiUpstream: upstream.url,
      http: { retries: 0 },
    });
    try {
      const body = codexRequest('thread-opaque', 6, 30);
      for (const [i, item] of body.input.entries())
        if (item.type === 'reasoning') body.input[i] = { ...item, encrypted_content: blob(i, 14_000) };
      const reasoningTokens = body.input
        .filter((item: any) => item.type === 'reasoning')
        .reduce((n: number, item: any) => n + estimateBodyTokens(item.encrypted_content), 0);
      // Without the reasoning the request fits; with it, it does not.
      expect(estimateBodyTokens(body) - reasoningTokens).toBeLessThan(window / 2);
      expect(estimateBodyTokens(body)).toBeGreaterThan(window);
      const res = await request(`${server.url}/v1/responses`, {
        method: 'POST',
        headers: codexHeaders('thread-opaque'),
        body: JSON.stringify({ ...body, stream: false }),
      });
      await res.body.text();
      expect(res.statusCode).toBe(200);
      expect(Number(res.headers['x-compactor-tokens-before'])).toBeGreaterThan(reasoningTokens);
      expect(upstream.refusals).toEqual([]);
      const sent = upstream.requests.filter((r) => !r.raw.includes(SUMMARY));
      expect(sent.length).toBeGreaterThan(0);
      for (const r of sent) expect(estimateBodyTokens(r.body)).toBeLessThanOrEqual(window);
      // Kept verbatim: whatever reasoning went upstream went as the client sent it.
      const sentReasoning = sent.at(-1)!.body.input.filter((item: any) => item.type === 'reasoning');
      for (const item of sentReasoning) expect(body.input).toContainEqual(item);
    } finally {
      await server.close();
      await upstream.close();
    }
  });
});
