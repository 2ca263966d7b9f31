import { afterAll, describe, expect, it } from '@jest/globals';
import { APICallError } from '@ai-sdk/provider';
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { compactorMiddleware } from '#src/adapters/ai-sdk/index.js';
import { fromAiMessages } from '#src/adapters/ai-sdk/convert.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { loadRealSession } from '#support/adapters/real-session.js';
import {
  MOCK_USAGE,
  summaryTestModel,
  type MockCallOptions,
} from '#support/adapters/ai-sdk-summary-model.js';

afterAll(freeEncoders);

const WINDOW = 8_000;
const STEPS = 24;
const MODEL = 'claude-sonnet-4-6';
const MARK = 'Summary written by the agent model itself.';
const REFUSAL = 'Requests which include tool_use or tool_result blocks must define tools.';
const real = loadRealSession();
const estimator = createEstimator();

/** What Anthropic's API does with a request that holds tool calls or results but defines no tools: a 400. */
function refuseToolBlocksWithoutTools(options: MockCallOptions, refusals: string[]): void {
  const blocks: Array<{ type: string }> = options.prompt.flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Array<{ type: string }>) : [],
  );
  const usesTools = blocks.some((p) => p.type === 'tool-call' || p.type === 'tool-result');
  if (!usesTools || (options.tools?.length ?? 0) > 0) return;
  refusals.push(REFUSAL);
  throw new APICallError({
    message: REFUSAL,
    url: 'https://api.anthropic.com/v1/messages',
    requestBodyValues: {},
    statusCode: 400,
    isRetryable: false,
  });
}

/** The agent's own Anthropic model, unwrapped, as the caller passes it to write summaries; it holds Anthropic's rule. */
const summaryModel = (refusals: string[]) =>
  summaryTestModel({
    provider: 'anthropic.messages',
    modelId: MODEL,
    mark: MARK,
    estimator,
    check: (options) => refuseToolBlocksWithoutTools(options, refusals),
  });

/** The agent side of the same model: step n replays the real session's n-th tool call, then it answers. */
function agentModel(refusals: string[]): MockLanguageModelV4 {
  let step = 0;
  return new MockLanguageModelV4({
    provider: 'anthropic.messages',
    modelId: MODEL,
    doGenerate: async (options) => {
      refuseToolBlocksWithoutTools(options, refusals);
      const n = step++;
      const s = real.steps[n];
      const content =
        n >= STEPS
          ? [{ type: 'text' as const, text: 'Done.' }]
          : [
              { type: 'text' as const, text: s.thought.slice(0, 400) },
              { type: 'tool-call' as const, toolCallId: `call-${n}`, toolName: 'bash', input: s.arguments },
            ];
      const finish = n >= STEPS ? ('stop' as const) : ('tool-calls' as const);
      return { content, finishReason: { unified: finish, raw: finish }, usage: MOCK_USAGE, warnings: [] };
    },
  });
}

const bash = tool({
  description: 'Run a bash command',
  inputSchema: jsonSchema<{ command: string }>({
    type: 'object',
    properties: { command: { type: 'string' } },
  }),
  execute: async (_input, { toolCallId }) => real.steps[Number(toolCallId.slice('call-'.length))].output,
});

describe('AI SDK adapter: summaries written by the agent own Anthropic model', () => {
  it('S2/L6: a tool loop is summarized by the same model with the agent system prompt and tools (listed, not callable), which the API requires', async () => {
    const refusals: string[] = [];
    const agent = agentModel(refusals);
    const summarizer = summaryModel(refusals);
    const middleware = compactorMiddleware({
      limits: { capacity: WINDOW },
      summarizer: { model: summarizer },
    });
    const messages: ModelMessage[] = [{ role: 'user', content: real.goal }];
    const result = await generateText({
      model: wrapLanguageModel({ model: agent, middleware }),
      system: real.system,
      messages,
      tools: { bash },
      stopWhen: stepCountIs(STEPS + 1),
      providerOptions: { compactor: { conversationId: 'same-model' } },
    });
    expect(result.text).toBe('Done.');
    expect(refusals).toEqual([]);
    const summaries = summarizer.doGenerateCalls;
    expect(summaries.length).toBeGreaterThan(0);
    for (const call of summaries) {
      // The summary request starts like the agent's own: its system prompt, then its tools.
      expect(call.prompt[0]).toEqual(expect.objectContaining({ role: 'system', content: real.system }));
      expect(call.tools?.map((t) => t.name)).toEqual(['bash']);
      expect(call.toolChoice).toEqual({ type: 'none' });
    }
    expect(JSON.stringify(agent.doGenerateCalls.at(-1)?.prompt)).toContain(MARK);
    // The summary request is counted with the prefix it sends: it fits the window.
    const largest = Math.max(
      ...summaries.map(
        (c) =>
          estimator.history(fromAiMessages(c.prompt.filter((m) => m.role !== 'system') as never)) +
          estimator.text(real.system) +
          estimator.text(JSON.stringify(c.tools)) +
          (c.maxOutputTokens ?? 0),
      ),
    );
    console.log(`ai-sdk same-model summaries: largest summary request ${largest} of ${WINDOW} tokens`);
    expect(largest).toBeLessThanOrEqual(WINDOW);
  });
});
