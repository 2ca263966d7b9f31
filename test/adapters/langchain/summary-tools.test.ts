import { afterAll, describe, expect, it } from '@jest/globals';
import { BaseChatModel, type BaseChatModelCallOptions } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { compactorMiddleware, fromBaseMessages } from '#src/adapters/langchain/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { loadRealSession } from '#support/adapters/real-session.js';
import { templateSummary } from '#support/adapters/template-summary.js';

afterAll(freeEncoders);

const STEPS = 24;
const MARK = 'Summary written by the agent model itself.';
const REFUSAL = 'Requests which include tool_use or tool_result blocks must define tools.';
const real = loadRealSession();

type Options = BaseChatModelCallOptions & { tools?: unknown[]; tool_choice?: string };

/**
 * One Anthropic chat model for the agent and its summaries, binding tools as the real
 * integration does; it refuses tool calls or results in a request that defines no tools, as the API does.
 */
class AnthropicRuleModel extends BaseChatModel<Options> {
  model = 'claude-sonnet-4-6';
  step = 0;
  refusals: string[] = [];
  summaryCalls: Options[] = [];
  _llmType() {
    return 'anthropic';
  }
  override bindTools(tools: unknown[], kwargs?: Partial<Options>) {
    return this.withConfig({ tools, ...kwargs } as Partial<Options>);
  }
  async _generate(messages: BaseMessage[], options: Options): Promise<ChatResult> {
    const usesTools = messages.some(
      (m) => m.type === 'tool' || (m instanceof AIMessage && (m.tool_calls?.length ?? 0) > 0),
    );
    if (usesTools && (options.tools?.length ?? 0) === 0) {
      this.refusals.push(REFUSAL);
      throw Object.assign(new Error(REFUSAL), { status: 400 });
    }
    let message: AIMessage;
    if (options.tool_choice === 'none') {
      this.summaryCalls.push(options);
      message = new AIMessage(templateSummary(fromBaseMessages(messages), MARK));
    } else {
      const n = this.step++;
      const s = real.steps[n];
      message =
        n >= STEPS
          ? new AIMessage('Done.')
          : new AIMessage({
              content: s.thought.slice(0, 400),
              tool_calls: [
                { id: `call-${n}`, name: 'bash', args: JSON.parse(s.arguments) as Record<string, unknown> },
              ],
            });
    }
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

describe('LangChain adapter: summaries written by the agent own Anthropic model', () => {
  it('S2/L6: a createAgent tool loop is summarized by the same model with the agent tools bound and tool use off, which the API requires', async () => {
    const model = new AnthropicRuleModel({});
    let ran = 0;
    const bash = tool(() => real.steps[ran++].output, {
      name: 'bash',
      description: 'Run a bash command',
      schema: z.object({ command: z.string() }),
    });
    const agent = createAgent({
      model,
      tools: [bash],
      systemPrompt: real.system,
      middleware: [compactorMiddleware({ limits: { capacity: 8_000 }, summarizer: { model } })],
    });
    const result = await agent.invoke(
      { messages: [new HumanMessage(real.goal)] },
      { recursionLimit: 4 * STEPS, configurable: { thread_id: 'same-model' } },
    );
    expect(model.refusals).toEqual([]);
    expect(model.summaryCalls.length).toBeGreaterThan(0);
    for (const call of model.summaryCalls)
      // The agent's tools are its own and the recall tool the middleware registers.
      expect(call.tools?.map((t) => (t as { function: { name: string } }).function.name)).toEqual([
        'bash',
        'recall',
      ]);
    expect(result.messages.at(-1)?.content).toBe('Done.');
  });
});
