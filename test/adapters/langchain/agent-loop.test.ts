import { afterAll, describe, expect, it } from '@jest/globals';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { compactorMiddleware, fromBaseMessages } from '#src/adapters/langchain/index.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { promptFacts } from '#support/adapters/prompt-checks.js';
import { fullConversation, loadRealSession } from '#support/adapters/real-session.js';
import { templateSummary } from '#support/adapters/template-summary.js';

afterAll(freeEncoders);

const WINDOW = 8_000;
const STEPS = 32;
const MARK = 'Summary written by the injected LangChain test model.';
const real = loadRealSession();
const estimator = createEstimator();

describe('LangChain adapter: a 32-step createAgent loop over a real session', () => {
  it('H1/C1/N1/L6: every prompt fits the window, is paired, states the goal; state keeps the full history; the summary comes from the injected model', async () => {
    const agentModel = fakeModel();
    for (let n = 0; n < STEPS; n++) {
      const s = real.steps[n];
      agentModel.respond(
        new AIMessage({
          content: s.thought.slice(0, 400),
          tool_calls: [
            { id: `call-${n}`, name: 'bash', args: JSON.parse(s.arguments) as Record<string, unknown> },
          ],
        }),
      );
    }
    agentModel.respond(new AIMessage('Done: the code attribute is customizable now.'));
    const summaryModel = fakeModel();
    for (let i = 0; i < 20; i++)
      summaryModel.respond(
        (messages: BaseMessage[]) => new AIMessage(templateSummary(fromBaseMessages(messages), MARK)),
      );

    let ran = 0;
    const bash = tool(() => real.steps[ran++].output, {
      name: 'bash',
      description: 'Run a bash command',
      schema: z.object({ command: z.string() }),
    });
    const middleware = compactorMiddleware({
      limits: { capacity: WINDOW },
      summarizer: { model: summaryModel },
    });
    const agent = createAgent({
      model: agentModel,
      tools: [bash],
      systemPrompt: real.system,
      middleware: [middleware],
    });
    const input = [new HumanMessage(real.goal)];
    // LangGraph itself gives input messages an id; what they say must not change.
    const view = () => JSON.stringify(input.map((m) => [m.type, m.content]));
    const before = view();
    const result = await agent.invoke(
      { messages: input },
      { recursionLimit: 4 * STEPS, configurable: { thread_id: 'django-16560' } },
    );
    expect(input).toHaveLength(1);
    expect(view()).toBe(before); // the caller's list is untouched
    // The agent's state keeps every message; only what the model saw was projected.
    expect(result.messages).toHaveLength(1 + 2 * STEPS + 1);
    expect(estimator.history(fullConversation(real, STEPS))).toBeGreaterThan(WINDOW);

    const prompts = agentModel.calls.map((c) =>
      promptFacts(fromBaseMessages(c.messages), estimator, real.goalLine),
    );
    expect(prompts).toHaveLength(STEPS + 1);
    const largest = Math.max(...prompts.map((p) => p.tokens));
    console.log(`langchain: largest prompt ${largest} of ${WINDOW} tokens over ${prompts.length} calls`);
    for (const p of prompts) {
      expect(p.tokens).toBeLessThanOrEqual(WINDOW);
      expect(p.protocolValid).toBe(true);
      expect(p.statesGoal).toBe(true);
    }
    expect(summaryModel.callCount).toBeGreaterThan(0);
    const last = agentModel.calls
      .at(-1)!
      .messages.map((m) => m.text)
      .join('\n');
    expect(last).toContain(MARK);
    expect(middleware.conversations.session('django-16560')?.history.length).toBeLessThan(2 * STEPS);
  });
});
