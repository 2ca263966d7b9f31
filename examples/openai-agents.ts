/**
 * Compactor in an OpenAI Agents SDK run (offline: the SDK's own scripted test model, no API key).
 *
 *   npm run build && npx tsx examples/openai-agents.ts
 *
 * The agent replays a real session's tool calls (examples/sessions/django__django-16560.traj.json)
 * with a window of 8,000 tokens. `compactorInputFilter` is the run's `callModelInputFilter`:
 * every model call receives projected input items (old tool results cleared, the conversation
 * summarized near the window, reasoning items kept with what follows them) while the run's
 * history and your `input` stay whole. Swap `ScriptedModel` for your model (e.g. `'gpt-5.4'`),
 * and pass `summarizer: { model }` to have an Agents SDK `Model` write the summaries.
 */
import { Agent, run, setTracingDisabled, tool, type AgentInputItem } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { createEstimator, msg } from 'context-compactor';
import { compactorInputFilter, fromAgentInputItems } from 'context-compactor/openai-agents';
import { z } from 'zod';
import { loadRealSession } from './real-session.js';

setTracingDisabled(true); // offline: nothing to export traces to

const WINDOW = 8_000;
const STEPS = 32;

// The real session: its task and the tool calls the agent made, with their outputs.
const { goal, steps } = loadRealSession(STEPS);

const model = new ScriptedModel([
  ...steps.map(({ thought, call }) => [
    assistantMessage(thought.slice(0, 400)),
    functionCall('bash', call.arguments, { callId: call.id }),
  ]),
  [assistantMessage('Done.')],
]);

let ran = 0;
const bash = tool({
  name: 'bash',
  description: 'Run a bash command',
  parameters: z.object({ command: z.string() }),
  execute: () => steps[ran++].output,
});
const agent = new Agent({ name: 'django', instructions: 'You fix bugs in Django.', model, tools: [bash] });
const filter = compactorInputFilter({ limits: { capacity: WINDOW }, conversationId: 'django-16560' });
const input: AgentInputItem[] = [{ role: 'user', content: goal }];
const result = await run(agent, input, {
  callModelInputFilter: filter,
  maxTurns: STEPS + 5,
});

const estimator = createEstimator();
const sizes = model.calls.map(({ request }) =>
  estimator.history([
    msg.system(request.systemInstructions ?? ''),
    ...fromAgentInputItems(request.input as AgentInputItem[]),
  ]),
);
sizes.forEach((tokens, n) => console.log(`step ${String(n).padStart(2)}: the model got ${tokens} tokens`));
console.log(
  `the run's history holds ${result.history.length} items, ${estimator.history(fromAgentInputItems(result.history))} tokens;`,
);
console.log(
  `the largest prompt the model got was ${Math.max(...sizes)} tokens (window ${WINDOW}) over ${sizes.length} model calls;`,
);
const kept = filter.conversations.session('django-16560')!;
console.log(
  `Compactor keeps ${kept.history.length} messages (summary + recent steps) for this conversation.`,
);
