/**
 * Compactor in a LangChain `createAgent` loop (offline: LangChain's fake chat model, no API key).
 *
 *   npm run build && npx tsx examples/langchain.ts
 *
 * The agent replays a real session's tool calls (examples/sessions/django__django-16560.traj.json)
 * with a window of 8,000 tokens. The middleware projects what the model sees each step (old tool
 * results cleared, the conversation summarized near the window); the agent's state keeps every
 * message. Swap `fakeModel()` for your chat model, and pass `summarizer: { model }` to have your
 * own model write the summaries (the offline summarizer is the default).
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createEstimator } from 'context-compactor';
import { compactorMiddleware, fromBaseMessages } from 'context-compactor/langchain';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { loadRealSession } from './real-session.js';

const WINDOW = 8_000;
const STEPS = 32;

// The real session: its task and the tool calls the agent made, with their outputs.
const { goal, steps } = loadRealSession(STEPS);

const model = fakeModel();
for (const { thought, call } of steps)
  model.respond(
    new AIMessage({
      content: thought.slice(0, 400),
      tool_calls: [
        { id: call.id, name: 'bash', args: JSON.parse(call.arguments) as Record<string, unknown> },
      ],
    }),
  );
model.respond(new AIMessage('Done.'));

let ran = 0;
const bash = tool(() => steps[ran++].output, {
  name: 'bash',
  description: 'Run a bash command',
  schema: z.object({ command: z.string() }),
});
const middleware = compactorMiddleware({ limits: { capacity: WINDOW } });
const agent = createAgent({ model, tools: [bash], middleware: [middleware] });
const result = await agent.invoke(
  { messages: [new HumanMessage(goal)] },
  { recursionLimit: 200, configurable: { thread_id: 'django-16560' } }, // the thread names the conversation
);

const estimator = createEstimator();
const sizes = model.calls.map((c) => estimator.history(fromBaseMessages(c.messages)));
sizes.forEach((tokens, n) => console.log(`step ${String(n).padStart(2)}: the model got ${tokens} tokens`));
console.log(
  `the agent's state holds ${result.messages.length} messages, ${estimator.history(fromBaseMessages(result.messages))} tokens;`,
);
console.log(
  `the largest prompt the model got was ${Math.max(...sizes)} tokens (window ${WINDOW}) over ${sizes.length} model calls;`,
);
const kept = middleware.conversations.session('django-16560')!;
console.log(
  `Compactor keeps ${kept.history.length} messages (summary + recent steps) for this conversation.`,
);
