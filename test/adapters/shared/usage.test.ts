import { afterAll, describe, expect, it } from '@jest/globals';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { Agent, run, setTracingDisabled, tool as agentsTool, Usage } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents/testing';
import { generateText, jsonSchema, stepCountIs, streamText, tool as aiTool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createAgent, tool as lcTool } from 'langchain';
import { z } from 'zod';
import { compactorMiddleware as aiSdkMiddleware } from '#src/adapters/ai-sdk/index.js';
import { compactorInputFilter } from '#src/adapters/openai-agents/index.js';
import { compactorMiddleware as langchainMiddleware } from '#src/adapters/langchain/index.js';
import { streamOf } from '#support/adapters/ai-sdk-stream.js';
import type { CompactorSession } from '#src/session/index.js';
import { freeEncoders } from '#src/estimate/index.js';

afterAll(freeEncoders);
setTracingDisabled(true);

const STEPS = 3;
const CALLS = STEPS + 1;
// What the fake provider reports for model call n: distinct, so a test can tell which call was recorded.
const inputOf = (n: number) => 5_000 + 100 * n;
const CACHED = 2_000;
const readFile = (n: number) => `contents of file ${n}\n`.repeat(40);

/**
 * After a loop of CALLS model calls: the conversation's cache health counted every call with its
 * reported tokens, and the next request's pressure is anchored on the last reported count.
 */
function expectUsageRecorded(session: CompactorSession | undefined) {
  expect(session).toBeDefined();
  const health = session!.cacheHealth.state();
  expect(health.requests).toBe(CALLS);
  expect(health.totalInputTokens).toBe(
    Array.from({ length: CALLS }, (_, n) => inputOf(n)).reduce((a, b) => a + b),
  );
  expect(health.totalCachedInputTokens).toBe(CACHED * CALLS);
  const pressure = session!.prepareRequest().pressure;
  expect(pressure.source).toBe('anchored');
  expect(pressure.tokens).toBeGreaterThanOrEqual(inputOf(CALLS - 1));
}

describe('usage is recorded in every adapter and mode', () => {
  for (const mode of ['generate', 'stream'] as const)
    it(`S5/T3: AI SDK ${mode}: each call's usage feeds cache health and anchors the next request`, async () => {
      let n = 0;
      const usageOf = (k: number) => ({
        inputTokens: { total: inputOf(k), noCache: inputOf(k) - CACHED, cacheRead: CACHED, cacheWrite: 0 },
        outputTokens: { total: 20, text: 20, reasoning: 0 },
      });
      const reply = () => {
        const k = n++;
        return k < STEPS
          ? {
              k,
              content: [
                { type: 'tool-call' as const, toolCallId: `call-${k}`, toolName: 'read', input: '{}' },
              ],
              finish: 'tool-calls' as const,
            }
          : { k, content: [{ type: 'text' as const, text: 'done' }], finish: 'stop' as const };
      };
      const agent = new MockLanguageModelV4({
        provider: 'openai.responses',
        modelId: 'agent-model',
        doGenerate: async () => {
          const r = reply();
          return {
            content: r.content,
            finishReason: { unified: r.finish, raw: r.finish },
            usage: usageOf(r.k),
            warnings: [],
          };
        },
        doStream: async () => {
          const r = reply();
          return { stream: streamOf(r.content, r.finish, usageOf(r.k)) };
        },
      });
      let reads = 0;
      const read = aiTool({
        description: 'Read a file',
        inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
        execute: async () => readFile(reads++),
      });
      const middleware = aiSdkMiddleware({ limits: { capacity: 100_000 } });
      const common = {
        model: wrapLanguageModel({ model: agent, middleware }),
        messages: [{ role: 'user' as const, content: 'read the files' }],
        tools: { read },
        stopWhen: stepCountIs(CALLS),
        providerOptions: { compactor: { conversationId: `usage-${mode}` } },
      };
      if (mode === 'generate') expect((await generateText(common)).text).toBe('done');
      else expect(await streamText(common).text).toBe('done');
      expectUsageRecorded(middleware.conversations.session(`usage-${mode}`));
    });

  for (const mode of ['invoke', 'stream'] as const)
    it(`S5/T3: LangChain ${mode}: each AIMessage's usage_metadata feeds cache health and anchors the next request`, async () => {
      const model = fakeModel();
      const usage = (k: number) => ({
        input_tokens: inputOf(k),
        output_tokens: 20,
        total_tokens: inputOf(k) + 20,
        input_token_details: { cache_read: CACHED },
      });
      for (let k = 0; k < STEPS; k++)
        model.respond(
          new AIMessage({
            content: '',
            tool_calls: [{ id: `call-${k}`, name: 'read', args: {} }],
            usage_metadata: usage(k),
          }),
        );
      model.respond(new AIMessage({ content: 'done', usage_metadata: usage(STEPS) }));
      let reads = 0;
      const read = lcTool(() => readFile(reads++), {
        name: 'read',
        description: 'Read a file',
        schema: z.object({}),
      });
      const middleware = langchainMiddleware({ limits: { capacity: 100_000 } });
      const agent = createAgent({ model, tools: [read], middleware: [middleware] });
      const config = { configurable: { thread_id: `usage-${mode}` } };
      const input = { messages: [new HumanMessage('read the files')] };
      if (mode === 'invoke') await agent.invoke(input, config);
      else for await (const _ of await agent.stream(input, { ...config, streamMode: 'values' })) void _;
      expect(model.callCount).toBe(CALLS);
      expectUsageRecorded(middleware.conversations.session(`usage-${mode}`));
    });

  for (const stream of [false, true])
    it(`S5/T3: OpenAI Agents run${stream ? ' (stream)' : ''}: each model response's usage feeds cache health and anchors the next request`, async () => {
      const usage = (k: number) =>
        new Usage({
          requests: 1,
          inputTokens: inputOf(k),
          outputTokens: 20,
          totalTokens: inputOf(k) + 20,
          inputTokensDetails: [{ cached_tokens: CACHED }],
        });
      const model = new ScriptedModel([
        ...Array.from({ length: STEPS }, (_, k) =>
          modelResponder(() => ({
            output: [functionCall('read', '{}', { callId: `call-${k}`, id: `fc_${k}` })],
            usage: usage(k),
          })),
        ),
        modelResponder(() => ({ output: [assistantMessage('done')], usage: usage(STEPS) })),
      ]);
      let reads = 0;
      const read = agentsTool({
        name: 'read',
        description: 'Read a file',
        parameters: z.object({}),
        execute: () => readFile(reads++),
      });
      const agent = new Agent({ name: 'reader', model, tools: [read] });
      const filter = compactorInputFilter({ limits: { capacity: 100_000 }, conversationId: 'usage-run' });
      if (stream) {
        const result = await run(agent, 'read the files', { callModelInputFilter: filter, stream: true });
        for await (const _ of result) void _;
        await result.completed;
        expect(result.finalOutput).toBe('done');
      } else {
        const result = await run(agent, 'read the files', { callModelInputFilter: filter });
        expect(result.finalOutput).toBe('done');
      }
      expect(model.calls).toHaveLength(CALLS);
      expectUsageRecorded(filter.conversations.session('usage-run'));
    });
});
