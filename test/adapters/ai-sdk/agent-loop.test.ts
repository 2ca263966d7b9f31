import { afterAll, describe, expect, it } from '@jest/globals';
import {
  generateText,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
  type ModelMessage,
} from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { compactorMiddleware } from '#src/adapters/ai-sdk/index.js';
import { fromAiMessages } from '#src/adapters/ai-sdk/convert.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import type { TestModelReply } from '#dev/loops/ai-sdk-reply.js';
import { streamOf } from '#support/adapters/ai-sdk-stream.js';
import { MOCK_USAGE, summaryTestModel } from '#support/adapters/ai-sdk-summary-model.js';
import { promptFacts, type PromptFacts } from '#support/adapters/prompt-checks.js';
import { fullConversation, loadRealSession } from '#support/adapters/real-session.js';

afterAll(freeEncoders);

const WINDOW = 8_000;
const STEPS = 32;
const MARK = 'Summary written by the injected AI SDK test model.';
const real = loadRealSession();
const estimator = createEstimator();
const usage = MOCK_USAGE;

/** The injected summary model: a framework test model that writes a deterministic summary of its prompt. */
const summaryModel = () =>
  summaryTestModel({ provider: 'test.summary', modelId: 'summary-model', mark: MARK, estimator });

/** The agent model: step n replays the real session's n-th tool call, then it answers. */
function agentModel(): MockLanguageModelV4 {
  let step = 0;
  const reply = (): TestModelReply => {
    const n = step++;
    if (n >= STEPS)
      return {
        content: [{ type: 'text' as const, text: 'Done: the code attribute is customizable now.' }],
        finish: 'stop' as const,
      };
    const s = real.steps[n];
    return {
      content: [
        { type: 'text' as const, text: s.thought.slice(0, 400) },
        { type: 'tool-call' as const, toolCallId: `call-${n}`, toolName: 'bash', input: s.arguments },
      ],
      finish: 'tool-calls' as const,
    };
  };
  return new MockLanguageModelV4({
    provider: 'openai.responses',
    modelId: 'agent-model',
    doGenerate: async () => {
      const r = reply();
      return { content: r.content, finishReason: { unified: r.finish, raw: r.finish }, usage, warnings: [] };
    },
    doStream: async () => {
      const r = reply();
      return { stream: streamOf(r.content, r.finish, usage) };
    },
  });
}

const bash = tool({
  description: 'Run a bash command',
  inputSchema: jsonSchema<{ command: string }>({
    type: 'object',
    properties: { command: { type: 'string' } },
  }),
  // The real session's output for this call.
  execute: async (_input, { toolCallId }) => real.steps[Number(toolCallId.slice('call-'.length))].output,
});

/** Facts of every prompt the agent model received (system and tools included). */
function receivedPrompts(
  model: MockLanguageModelV4,
  calls: 'doGenerateCalls' | 'doStreamCalls',
): PromptFacts[] {
  return model[calls].map((call) => {
    const facts = promptFacts(fromAiMessages(call.prompt as never), estimator, real.goalLine);
    return { ...facts, tokens: facts.tokens + estimator.text(JSON.stringify(call.tools ?? [])) };
  });
}

describe('AI SDK adapter: a 32-step tool loop over a real session', () => {
  for (const mode of ['generate', 'stream'] as const) {
    it(`H1/C1/N1/L6: every ${mode} prompt fits ${WINDOW} tokens, is paired, states the goal; the summary comes from the injected model`, async () => {
      const agent = agentModel();
      const summarizer = summaryModel();
      const middleware = compactorMiddleware({
        limits: { capacity: WINDOW },
        summarizer: { model: summarizer },
      });
      const model = wrapLanguageModel({ model: agent, middleware });
      const messages: ModelMessage[] = [{ role: 'user', content: real.goal }];
      const before = JSON.stringify(messages);
      const common = {
        model,
        system: real.system,
        messages,
        tools: { bash },
        stopWhen: stepCountIs(STEPS + 1),
        providerOptions: { compactor: { conversationId: `django-${mode}` } },
      };
      if (mode === 'generate') {
        const result = await generateText(common);
        expect(result.text).toContain('Done');
        // Without the middleware the conversation would not fit: the projection was needed.
        expect(estimator.history(fullConversation(real, STEPS))).toBeGreaterThan(WINDOW);
        expect(result.steps).toHaveLength(STEPS + 1);
      } else {
        const result = streamText(common);
        expect(await result.text).toContain('Done');
        expect(await result.steps).toHaveLength(STEPS + 1);
      }
      expect(JSON.stringify(messages)).toBe(before); // the caller's list is untouched

      const prompts = receivedPrompts(agent, mode === 'generate' ? 'doGenerateCalls' : 'doStreamCalls');
      expect(prompts).toHaveLength(STEPS + 1);
      const largest = Math.max(...prompts.map((p) => p.tokens));
      console.log(
        `ai-sdk ${mode}: largest prompt ${largest} of ${WINDOW} tokens over ${prompts.length} calls`,
      );
      for (const p of prompts) {
        expect(p.tokens).toBeLessThanOrEqual(WINDOW);
        expect(p.protocolValid).toBe(true);
        expect(p.statesGoal).toBe(true);
      }
      // Compaction happened, and its summary is the injected model's.
      expect(summarizer.doGenerateCalls.length).toBeGreaterThan(0);
      const lastPrompt = JSON.stringify(
        agent[mode === 'generate' ? 'doGenerateCalls' : 'doStreamCalls'].at(-1)?.prompt,
      );
      expect(lastPrompt).toContain(MARK);
      const session = middleware.conversations.session(`django-${mode}`);
      expect(session?.history.length).toBeLessThan(2 * STEPS + 1);
    });
  }
});
