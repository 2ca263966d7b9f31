import { afterAll, describe, expect, it } from '@jest/globals';
import { Agent, run, setTracingDisabled, tool, type AgentInputItem } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents/testing';
import { z } from 'zod';
import { compactorInputFilter, fromAgentInputItems } from '#src/adapters/openai-agents/index.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg } from '#src/messages/message.js';
import { promptFacts } from '#support/adapters/prompt-checks.js';
import { fullConversation, loadRealSession } from '#support/adapters/real-session.js';
import { templateSummary } from '#support/adapters/template-summary.js';

afterAll(freeEncoders);
setTracingDisabled(true); // offline: no trace exporter

const WINDOW = 8_000;
const STEPS = 32;
const MARK = 'Summary written by the injected Agents SDK test model.';
const real = loadRealSession();
const estimator = createEstimator();

/** The agent model: step n reasons, says what it will do and replays the real session's n-th call; then it answers. */
function agentModel(): ScriptedModel {
  const steps = real.steps.slice(0, STEPS).map((s, n) =>
    modelResponder(() => [
      {
        type: 'reasoning' as const,
        id: `rs_${n}`,
        content: [{ type: 'input_text' as const, text: `Step ${n}: next I run ${s.name}.` }],
        providerData: { encryptedContent: `enc-${n}` },
      },
      assistantMessage(s.thought.slice(0, 400), { id: `msg_${n}` }),
      functionCall('bash', s.arguments, { callId: `call-${n}`, id: `fc_${n}` }),
    ]),
  );
  return new ScriptedModel([...steps, [assistantMessage('Done: the code attribute is customizable now.')]]);
}

/** The injected summary model: an SDK test model that writes a deterministic summary of its input. */
function summaryModel(): ScriptedModel {
  const respond = modelResponder((call) => {
    const input = call.request.input as AgentInputItem[];
    return [assistantMessage(templateSummary(fromAgentInputItems(input), MARK))];
  });
  return new ScriptedModel(Array.from({ length: 20 }, () => respond));
}

/** Responses rules on the items themselves: results answer earlier calls once; reasoning is followed by an item. */
function itemsValid(items: readonly AgentInputItem[]): boolean {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (item.type === 'function_call') calls.add(item.callId);
    if (item.type === 'function_call_result') {
      if (!calls.has(item.callId) || answered.has(item.callId)) return false;
      answered.add(item.callId);
    }
    if (item.type === 'reasoning' && (i + 1 === items.length || items[i + 1].type === 'reasoning'))
      return false;
  }
  return true;
}

describe('OpenAI Agents SDK adapter: a 32-step run() over a real session', () => {
  it('H1/C1/N1/L6: every model input fits the window, is paired, states the goal; the caller input is untouched; the summary comes from the injected model', async () => {
    const model = agentModel();
    const summarizer = summaryModel();
    let ran = 0;
    const bash = tool({
      name: 'bash',
      description: 'Run a bash command',
      parameters: z.object({ command: z.string() }),
      execute: () => real.steps[ran++].output,
    });
    const agent = new Agent({ name: 'django', instructions: real.system, model, tools: [bash] });
    const filter = compactorInputFilter({
      limits: { capacity: WINDOW },
      summarizer: { model: summarizer, modelName: 'summary-model' },
      conversationId: 'django-16560',
    });
    const input: AgentInputItem[] = [{ role: 'user', content: real.goal }];
    const before = JSON.stringify(input);
    const result = await run(agent, input, {
      callModelInputFilter: filter,
      maxTurns: STEPS + 5,
    });

    expect(result.finalOutput).toContain('Done');
    expect(JSON.stringify(input)).toBe(before); // the caller's list is untouched
    // The run's own history keeps every item; only what the model saw was projected.
    expect(result.history.filter((i) => i.type === 'function_call_result')).toHaveLength(STEPS);
    expect(estimator.history(fullConversation(real, STEPS))).toBeGreaterThan(WINDOW);

    const requests = model.calls.map((c) => c.request);
    expect(requests).toHaveLength(STEPS + 1);
    const sizes = requests.map((r) => {
      const items = r.input as AgentInputItem[];
      const prompt = [msg.system(r.systemInstructions ?? ''), ...fromAgentInputItems(items)];
      const facts = promptFacts(prompt, estimator, real.goalLine);
      expect(facts.protocolValid).toBe(true);
      expect(itemsValid(items)).toBe(true);
      expect(facts.statesGoal).toBe(true);
      return facts.tokens + estimator.text(JSON.stringify(r.tools));
    });
    const largest = Math.max(...sizes);
    console.log(`openai-agents: largest input ${largest} of ${WINDOW} tokens over ${sizes.length} calls`);
    for (const tokens of sizes) expect(tokens).toBeLessThanOrEqual(WINDOW);
    // Reasoning items reach the model with the items that follow them.
    const last = requests.at(-1)!.input as AgentInputItem[];
    const at = last.findIndex((i) => i.type === 'reasoning' && i.id === `rs_${STEPS - 1}`);
    expect(last.slice(at + 1, at + 3).map((i) => ('id' in i ? i.id : undefined))).toEqual([
      `msg_${STEPS - 1}`,
      `fc_${STEPS - 1}`,
    ]);
    // Compaction happened, and its summary is the injected model's.
    expect(summarizer.calls.length).toBeGreaterThan(0);
    expect(JSON.stringify(requests.at(-1)?.input)).toContain(MARK);
    expect(filter.conversations.session('django-16560')?.history.length).toBeLessThan(2 * STEPS);
  });
});
